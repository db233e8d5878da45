"""Guarded writes: state moves and first-writer-wins markers pinned by DynamoDB conditions.

Every "must not double-act" point in the systems (one offer per order, one nudge per offer,
one terminal state per offer, one review request per job) is a single conditional write. Losing
that write is the normal outcome of a duplicate or a race, not an error: these helpers report it
as ``won=False`` together with what DynamoDB says is there now, read from the failed write
itself (``ReturnValuesOnConditionCheckFailure=ALL_OLD``), so the loser needs no extra read.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from handlers.common import cold_path

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

_CONDITION_FAILED = "ConditionalCheckFailedException"

ABSENT = object()
"""In ``transition``'s ``where``: the attribute must not exist."""


@dataclass(frozen=True)
class TransitionResult:
    """What a guarded state move did.

    Attributes:
        won: True when this call moved the item; False when the condition did not hold
            (someone else moved it first, or it is in another state, or it does not exist).
        current: The state attribute's value now: ``new`` on a win, the value another writer
            left on a loss, None when the item or the attribute is missing.
        item: The whole item after the move on a win, as found on a loss; None if absent.
    """

    won: bool
    current: Any = None
    item: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class PutIfAbsentResult:
    """What a first-writer-wins put did.

    Attributes:
        won: True when this call created the item; False when an item with that key existed.
        existing: The item that was already there when ``won`` is False.
    """

    won: bool
    existing: Mapping[str, Any] | None = None


def condition_failed(err: Exception) -> bool:
    """True when ``err`` is DynamoDB refusing a write because its condition did not hold.

    The one check every guarded write uses (a lost race or a duplicate is this, not an error).
    """
    response = getattr(err, "response", None) or {}
    return bool(response.get("Error", {}).get("Code") == _CONDITION_FAILED)


def transaction_condition_failed(err: Exception, position: int | None = 0) -> bool:
    """True when a TransactWriteItems was cancelled by a failed condition.

    ``position``: the index of the action whose condition is asked about (DynamoDB lists one
    reason per action, in order, ``None`` for those that passed); ``None`` asks about any.
    Amazon DynamoDB API Reference, "TransactWriteItems", CancellationReasons:
    https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
    """
    response = getattr(err, "response", None) or {}
    if response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return False
    codes = [str((r or {}).get("Code", "")) for r in response.get("CancellationReasons") or []]
    if not codes:
        return "ConditionalCheckFailed" in str(err)
    if position is None:
        return "ConditionalCheckFailed" in codes
    return position < len(codes) and codes[position] == "ConditionalCheckFailed"


def old_item(err: Exception) -> dict[str, Any] | None:
    """The item DynamoDB returned with a failed condition (wire format), deserialised."""
    raw: Any = (getattr(err, "response", None) or {}).get("Item")
    if not isinstance(raw, Mapping) or not raw:
        return None
    deserializer = cold_path.load("boto3.dynamodb.types").TypeDeserializer()
    return {name: deserializer.deserialize(value) for name, value in raw.items()}


def _is_many(expected: object) -> bool:
    return isinstance(expected, list | tuple | set | frozenset)


def transition(
    table: Table,
    key: Mapping[str, Any],
    attribute: str,
    expected: Any,
    new: Any,
    extra_updates: Mapping[str, Any] | None = None,
    *,
    remove: Collection[str] = (),
    where: Mapping[str, Any] | None = None,
) -> TransitionResult:
    """Move the item at ``key`` from ``expected`` to ``new`` in ``attribute``, or report the loss.

    ``expected`` may be one value or a list/tuple/set of acceptable values (``IN``). The write
    also sets ``extra_updates`` and removes ``remove`` atomically with the move, and holds only
    while each ``where`` attribute equals its value (or, for ``ABSENT``, does not exist): a
    claim's token, a stamp not yet written. ``new`` may equal ``expected`` (a guarded update that
    moves nothing). A missing item never matches, so this never creates one. Errors other than
    the condition failing (throttling exhausted, a transaction conflict, a bad key) are raised:
    they are not an answer.
    """
    names: dict[str, str] = {"#state": attribute}
    values: dict[str, Any] = {":new": new}
    sets = ["#state = :new"]
    for index, (name, value) in enumerate(sorted((extra_updates or {}).items())):
        if name == attribute:
            raise ValueError(f"{attribute!r} is the state attribute; pass its value as new")
        names[f"#u{index}"] = name
        values[f":u{index}"] = value
        sets.append(f"#u{index} = :u{index}")
    update = "SET " + ", ".join(sets)
    if remove:
        removed = []
        for index, name in enumerate(sorted(remove)):
            names[f"#r{index}"] = name
            removed.append(f"#r{index}")
        update += " REMOVE " + ", ".join(removed)
    if _is_many(expected):
        options = sorted(expected, key=repr)
        if not options or len(options) > 99:
            raise ValueError("expected needs between 1 and 99 states")
        for index, option in enumerate(options):
            values[f":e{index}"] = option
        condition = "#state IN (" + ", ".join(f":e{i}" for i in range(len(options))) + ")"
    else:
        values[":e0"] = expected
        condition = "#state = :e0"
    for index, (name, value) in enumerate(sorted((where or {}).items())):
        names[f"#w{index}"] = name
        if value is ABSENT:
            condition += f" AND attribute_not_exists(#w{index})"
        else:
            values[f":w{index}"] = value
            condition += f" AND #w{index} = :w{index}"
    try:
        answer = table.update_item(
            Key=dict(key),
            UpdateExpression=update,
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
            ReturnValues="ALL_NEW",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    except ClientError as err:
        if not condition_failed(err):
            raise
        old = old_item(err)
        return TransitionResult(
            won=False, current=None if old is None else old.get(attribute), item=old
        )
    item = answer.get("Attributes") or {}
    return TransitionResult(won=True, current=item.get(attribute, new), item=item)


def put_if_absent(table: Table, item: Mapping[str, Any], key_attr: str) -> PutIfAbsentResult:
    """Create ``item`` unless an item with its key exists; the first writer wins.

    ``key_attr`` is the partition key attribute; the condition is checked against the item with
    the same full primary key, so it serves composite keys too.
    """
    if key_attr not in item:
        raise ValueError(f"item has no key attribute {key_attr!r}")
    try:
        table.put_item(
            Item=dict(item),
            ConditionExpression="attribute_not_exists(#k)",
            ExpressionAttributeNames={"#k": key_attr},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    except ClientError as err:
        if not condition_failed(err):
            raise
        return PutIfAbsentResult(won=False, existing=old_item(err))
    return PutIfAbsentResult(won=True)


# Transactions -----------------------------------------------------------------------------

_TX_CANCELLED = "TransactionCanceledException"


@dataclass(frozen=True)
class TxResult:
    """What one ``TransactWriteItems`` did: all of its writes, or none of them.

    Attributes:
        won: True when every write was applied.
        reasons: On a loss, DynamoDB's cancellation code per write, in request order
            (``"None"`` for a write that was not the cause, ``"ConditionalCheckFailed"``,
            ``"TransactionConflict"`` when another request held one of the items).
    """

    won: bool
    reasons: tuple[str, ...] = ()

    def failed(self, index: int) -> bool:
        """Whether write ``index`` is one of the reasons the transaction was cancelled."""
        return not self.won and index < len(self.reasons) and self.reasons[index] != "None"

    @property
    def conflict(self) -> bool:
        """Another request was writing one of the items at the same moment (retry later)."""
        return "TransactionConflict" in self.reasons


def tx_put(
    table_name: str,
    item: Mapping[str, Any],
    condition: str | None = None,
    values: Mapping[str, Any] | None = None,
    names: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One conditional Put for ``transact``."""
    op: dict[str, Any] = {"TableName": table_name, "Item": dict(item)}
    return {"Put": _conditioned(op, condition, values, names)}


def tx_update(
    table_name: str,
    key: Mapping[str, Any],
    update: str,
    condition: str | None = None,
    values: Mapping[str, Any] | None = None,
    names: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One conditional Update for ``transact``."""
    op: dict[str, Any] = {"TableName": table_name, "Key": dict(key), "UpdateExpression": update}
    return {"Update": _conditioned(op, condition, values, names)}


def tx_delete(
    table_name: str,
    key: Mapping[str, Any],
    condition: str | None = None,
    values: Mapping[str, Any] | None = None,
    names: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One conditional Delete for ``transact``."""
    op: dict[str, Any] = {"TableName": table_name, "Key": dict(key)}
    return {"Delete": _conditioned(op, condition, values, names)}


def tx_condition_check(
    table_name: str,
    key: Mapping[str, Any],
    condition: str,
    values: Mapping[str, Any] | None = None,
    names: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One ConditionCheck for ``transact``: the transaction holds only if ``condition`` does on
    the item at ``key`` (which it neither reads back nor writes). Needs
    ``dynamodb:ConditionCheckItem`` on that table."""
    op: dict[str, Any] = {"TableName": table_name, "Key": dict(key)}
    return {"ConditionCheck": _conditioned(op, condition, values, names)}


def _conditioned(
    op: dict[str, Any],
    condition: str | None,
    values: Mapping[str, Any] | None,
    names: Mapping[str, str] | None,
) -> dict[str, Any]:
    if condition:
        op["ConditionExpression"] = condition
    if values:
        op["ExpressionAttributeValues"] = dict(values)
    if names:
        op["ExpressionAttributeNames"] = dict(names)
    return op


def transact(table: Table, writes: list[dict[str, Any]]) -> TxResult:
    """Apply ``writes`` (``tx_put`` / ``tx_update`` / ``tx_delete`` / ``tx_condition_check``) all
    together, or none.

    The writes may name any table of the account and region; they go through ``table``'s
    resource client, which converts plain Python values (str, int, Decimal, list, dict, set)
    to DynamoDB's wire format, as ``Table.put_item`` does.

    DynamoDB applies a ``TransactWriteItems`` atomically: every condition is checked and every
    write applied as one step, or the whole request is cancelled and nothing changes; two
    transactions touching one item never interleave (the loser is cancelled with
    ``TransactionConflict``). "Amazon DynamoDB Transactions: How it works",
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html.
    A cancellation is an answer (``won=False`` with the reasons); other errors are raised.
    """
    if not 1 <= len(writes) <= 100:
        raise ValueError("a transaction holds between 1 and 100 writes")
    try:
        table.meta.client.transact_write_items(TransactItems=writes)  # type: ignore[arg-type]
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") != _TX_CANCELLED:
            raise
        reasons = tuple(
            str(r.get("Code") or "None") for r in err.response.get("CancellationReasons") or []
        )
        return TxResult(won=False, reasons=reasons)
    return TxResult(won=True)
