"""DynamoDB adapters for the five tables; every write that must not repeat is conditional.

* rrs-requests: created once per completion (``put_if_absent``), then moved only by
  conditional updates on ``state``; the terminal move is one transaction with its audit.
* rrs-audit: append-only. ``Audit.append`` is the only write and always carries
  ``attribute_not_exists``, so nothing in the audit is ever overwritten; no role holds
  UpdateItem or DeleteItem on the table.
* rrs-optout, rrs-jobs: first writer wins.
* rrs-customers: upserted from the sheet, skipped when the row is unchanged.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from handlers.common import cold_path
from handlers.common.aws_clients import client, table
from handlers.common.degradations import Ledger
from handlers.common.forgotten import salted
from handlers.common.transitions import (
    ABSENT,
    PutIfAbsentResult,
    condition_failed,
    put_if_absent,
    transaction_condition_failed,
    transition,
)
from handlers.review_requests.contract import AUDIT_TTL, CUSTOMERS_TTL, REQUESTS, REQUESTS_TTL
from handlers.review_requests.domain import Customer, State
from handlers.review_requests.timing import iso, iso_micro


def dynamo_safe(value: Any) -> Any:
    """``value`` with floats as Decimal and tuples as lists, as boto3's serializer wants."""
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, Mapping):
        return {str(k): dynamo_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [dynamo_safe(v) for v in value]
    return value


def degradation_ledger(requests_table: str) -> Ledger:
    """rrs's degradation notes (handlers/common/degradations.py), kept in rrs-requests: its TTL
    removes them once the cause is fixed, and they carry no ``state``, so the state-due index
    (the sweep's only query) never sees them."""
    return Ledger(table(requests_table), REQUESTS.partition_key.name, REQUESTS_TTL)


# Audit ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditEntry:
    """One audit record: what happened to a request and the facts it was built from.

    Attributes:
        request_id: Partition key.
        ts: Sort key: ``<UTC time with microseconds>#<step>-<event>`` normally; a deterministic key
            (``escalation#...``, ``<event time>#feedback#<event id>``) where a redelivery
            must find the entry it already wrote.
        event: ``intake``, ``grade``, ``message``, ``delivered``, ``suppressed``,
            ``deferred``, ``send_failed``, ``feedback``, ``escalation_claim``,
            ``escalation_sent``...
        facts: The inputs and outputs of the decision, as plain data.
        at: When it was written (ISO UTC).
    """

    request_id: str
    ts: str
    event: str
    facts: Mapping[str, Any] = field(default_factory=dict)
    at: str = ""

    @classmethod
    def now(
        cls,
        request_id: str,
        event: str,
        facts: Mapping[str, Any],
        moment: dt.datetime,
        step: int = 0,
    ) -> AuditEntry:
        """An entry keyed ``<moment, microseconds>#<step>-<event>``; ``step`` orders the
        entries one decision writes at the same moment (grade, then message, then delivery)."""
        key = f"{iso_micro(moment)}#{step:02d}-{event}"
        return cls(request_id, key, event, facts, iso(moment))

    def item(self, retention_days: int) -> dict[str, Any]:
        """The entry as stored: it expires ``retention_days`` after it was written (rrs-audit's
        TTL, ``retentionDays``, as its request)."""
        if not self.at:
            raise ValueError(f"audit entry {self.ts} of {self.request_id} has no time")
        written = dt.datetime.fromisoformat(self.at.replace("Z", "+00:00"))
        return {
            "request_id": self.request_id,
            "ts": self.ts,
            "event": self.event,
            "at": self.at,
            "facts": dynamo_safe(dict(self.facts)),
            AUDIT_TTL: int((written + dt.timedelta(days=retention_days)).timestamp()),
        }


class Audit:
    """rrs-audit: append and read, never overwrite; each entry expires by TTL."""

    def __init__(self, table_name: str, retention_days: int) -> None:
        self.name = table_name
        self.table = table(table_name)
        self.retention_days = retention_days

    def append(self, entry: AuditEntry) -> bool:
        """Write ``entry`` unless its key exists; True when this call wrote it."""
        return put_if_absent(self.table, entry.item(self.retention_days), "request_id").won

    def entries(self, request_id: str, prefix: str = "") -> list[dict[str, Any]]:
        """The request's entries in key order, optionally only keys starting with ``prefix``."""
        conditions = cold_path.load("boto3.dynamodb.conditions")

        condition: Any = conditions.Key("request_id").eq(request_id)
        if prefix:
            condition = condition & conditions.Key("ts").begins_with(prefix)
        found: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"KeyConditionExpression": condition, "ConsistentRead": True}
        while True:
            page = self.table.query(**kwargs)
            found.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


# Requests -------------------------------------------------------------------------------


class Requests:
    """rrs-requests: one item per completion, moved only by conditional writes."""

    def __init__(self, table_name: str, index_name: str) -> None:
        self.name = table_name
        self.index_name = index_name
        self.table = table(table_name)

    def create(self, item: Mapping[str, Any]) -> PutIfAbsentResult:
        """First completion wins; a redelivery gets ``won=False`` and the existing item."""
        return put_if_absent(self.table, dynamo_safe(dict(item)), "request_id")

    def get(self, request_id: str) -> dict[str, Any] | None:
        answer = self.table.get_item(Key={"request_id": request_id}, ConsistentRead=True)
        item = answer.get("Item")
        return None if item is None else dict(item)

    def _move(
        self, request_id: str, expected: str, new: str, updates: Mapping[str, Any],
        *, remove: Sequence[str] = (), where: Mapping[str, Any] | None = None,
    ) -> bool:
        """One guarded state move (``transitions.transition``); False when it lost."""
        key = {"request_id": request_id}
        moved = transition(self.table, key, "state", expected, new, updates, remove=remove, where=where)
        return moved.won

    def _update(self, **kwargs: Any) -> bool:
        try:
            self.table.update_item(**kwargs)
        except ClientError as err:
            if condition_failed(err):
                return False
            raise
        return True

    def defer(self, request_id: str, due: str, now: str) -> bool:
        """Move a still-scheduled request's due time (quiet hours); False if it moved on."""
        return self._update(
            Key={"request_id": request_id},
            UpdateExpression="SET #due = :due, deferred_at = :now ADD deferrals :one",
            ConditionExpression="#state = :scheduled",
            ExpressionAttributeNames={"#due": "due", "#state": "state"},
            ExpressionAttributeValues={
                ":due": due,
                ":now": now,
                ":one": 1,
                ":scheduled": State.SCHEDULED.value,
            },
        )

    def mark_swept(self, request_id: str, seen_sweeps: int, now: str) -> bool:
        """Count one sweep re-drive, only if nobody moved or swept the request meanwhile."""
        return self._update(
            Key={"request_id": request_id},
            UpdateExpression="SET sweeps = :next, swept_at = :now",
            ConditionExpression=(
                "#state = :scheduled AND (attribute_not_exists(sweeps) OR sweeps = :seen)"
            ),
            ExpressionAttributeNames={"#state": "state"},
            ExpressionAttributeValues={
                ":next": seen_sweeps + 1,
                ":seen": seen_sweeps,
                ":now": now,
                ":scheduled": State.SCHEDULED.value,
            },
        )

    def give_up(self, request_id: str, reason: str, now: str) -> bool:
        """scheduled -> suppressed for a straggler the sweep escalates instead of re-driving."""
        return self._move(
            request_id, State.SCHEDULED.value, State.SUPPRESSED.value,
            {"suppressed_reason": reason, "finished_at": now},
        )

    def release_claim(self, request_id: str, claimed_state: str, claim: str, now: str) -> bool:
        """Undo our own terminal move after the send failed, so a retry may send."""
        return self._move(
            request_id, claimed_state, State.SCHEDULED.value, {"released_at": now},
            remove=("claim", "sent_at"), where={"claim": claim},
        )

    def correct_to_suppressed(
        self, request_id: str, claimed_state: str, claim: str, reason: str, now: str
    ) -> bool:
        """Our claim sent nothing (the carrier says opted out): record it as suppressed."""
        return self._move(
            request_id, claimed_state, State.SUPPRESSED.value,
            {"suppressed_reason": reason, "finished_at": now},
            remove=("sent_at",), where={"claim": claim},
        )

    def confirm_delivery(
        self, request_id: str, claimed_state: str, claim: str, message_id: str, now: str
    ) -> bool:
        """Stamp our claim ``delivered_at``: the provider accepted the message."""
        return self._move(
            request_id, claimed_state, claimed_state,
            {"delivered_at": now, "provider_message_id": message_id}, where={"claim": claim},
        )

    def unconfirmed(
        self, *, claimed_before: str, due_since: str, due_until: str
    ) -> Iterator[dict[str, Any]]:
        """Asked or diverted requests claimed before ``claimed_before``, never confirmed sent
        and not yet reported, whose due time lies in ``[due_since, due_until]`` (via the GSI)."""
        conditions = cold_path.load("boto3.dynamodb.conditions")

        for state in (State.ASKED, State.DIVERTED):
            kwargs: dict[str, Any] = {
                "IndexName": self.index_name,
                "KeyConditionExpression": conditions.Key("state").eq(state.value)
                & conditions.Key("due").between(due_since, due_until),
                "FilterExpression": conditions.Attr("delivered_at").not_exists()
                & conditions.Attr("unconfirmed_at").not_exists()
                & conditions.Attr("sent_at").lte(claimed_before),
            }
            while True:
                page = self.table.query(**kwargs)
                for item in page.get("Items", []):
                    yield dict(item)
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def mark_unconfirmed(self, request_id: str, claimed_state: str, now: str) -> bool:
        """Record that the sweep reported this claim (once: the first sweep wins)."""
        return self._move(
            request_id, claimed_state, claimed_state, {"unconfirmed_at": now},
            where={"delivered_at": ABSENT, "unconfirmed_at": ABSENT},
        )

    def stragglers(self, due_before: str, limit: int) -> Iterator[dict[str, Any]]:
        """Scheduled requests due at or before ``due_before``, oldest first, via the GSI."""
        conditions = cold_path.load("boto3.dynamodb.conditions")

        kwargs: dict[str, Any] = {
            "IndexName": self.index_name,
            "KeyConditionExpression": conditions.Key("state").eq(State.SCHEDULED.value)
            & conditions.Key("due").lte(due_before),
        }
        seen = 0
        while seen < limit:
            page = self.table.query(**kwargs)
            for item in page.get("Items", []):
                yield dict(item)
                seen += 1
                if seen >= limit:
                    return
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


@dataclass(frozen=True)
class Finish:
    """What ``finish_with_audit`` did; truthy when this call moved the request.

    Attributes:
        won: The request moved (and the audit entries were written).
        opted_out: When an opt-out checked inside the write was found: that contact.
    """

    won: bool
    opted_out: str | None = None

    def __bool__(self) -> bool:
        return self.won


def finish_with_audit(
    requests: Requests,
    audit: Audit,
    *,
    request_id: str,
    new_state: State,
    updates: Mapping[str, Any],
    entries: Sequence[AuditEntry],
    not_opted_out: tuple[OptOuts, Sequence[str]] | None = None,
) -> Finish:
    """scheduled -> ``new_state`` and the audit entries, in one transaction.

    The state condition is the once-only guard: a duplicate delivery or a sweep-driven copy
    loses here and sends nothing. Because the audit entries ride in the same transaction,
    every grade and message the request was decided with is on record whenever the state
    moved, and never when it did not. ``not_opted_out`` (the list and the contacts) adds a
    ConditionCheck per contact that its opt-out item is absent, so an opt-out stored at any
    moment before this write wins over the claim (the earlier read is only a shortcut).
    Returns a falsy Finish when the request was not scheduled or a contact opted out.
    """
    dynamo_types = cold_path.load("boto3.dynamodb.types")
    serializer = dynamo_types.TypeSerializer()

    def wire(values: Mapping[str, Any]) -> dict[str, Any]:
        return {k: serializer.serialize(dynamo_safe(v)) for k, v in values.items()}

    names = {"#state": "state"}
    values: dict[str, Any] = {":new": new_state.value, ":scheduled": State.SCHEDULED.value}
    sets = ["#state = :new"]
    for index, (name, value) in enumerate(sorted(updates.items())):
        names[f"#u{index}"] = name
        values[f":u{index}"] = value
        sets.append(f"#u{index} = :u{index}")
    items: list[dict[str, Any]] = [
        {
            "Update": {
                "TableName": requests.name,
                "Key": wire({"request_id": request_id}),
                "UpdateExpression": "SET " + ", ".join(sets),
                "ConditionExpression": "#state = :scheduled",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": wire(values),
            }
        }
    ]
    for entry in entries:
        items.append(
            {
                "Put": {
                    "TableName": audit.name,
                    "Item": wire(entry.item(audit.retention_days)),
                    "ConditionExpression": "attribute_not_exists(#ts)",
                    "ExpressionAttributeNames": {"#ts": "ts"},
                }
            }
        )
    checked: list[str] = []
    if not_opted_out is not None:
        optouts, contacts = not_opted_out
        checked = list(dict.fromkeys(contacts))
        for contact in checked:
            items.append(
                {
                    "ConditionCheck": {
                        "TableName": optouts.name,
                        "Key": wire({"contact": contact}),
                        "ConditionExpression": "attribute_not_exists(#c)",
                        "ExpressionAttributeNames": {"#c": "contact"},
                    }
                }
            )
    try:
        client("dynamodb").transact_write_items(TransactItems=items)
    except ClientError as err:
        first_check = len(items) - len(checked)
        for offset, contact in enumerate(checked):
            if transaction_condition_failed(err, first_check + offset):
                return Finish(False, opted_out=contact)
        # Otherwise lost only when the state move's own condition (the first action) failed.
        if transaction_condition_failed(err, 0):
            return Finish(False)
        raise
    return Finish(True)


# Opt-outs, customers, jobs --------------------------------------------------------------


class OptOuts:
    """rrs-optout: the suppression list, keyed by the normalised contact."""

    def __init__(self, table_name: str, salt: Callable[[], str | None] | None = None) -> None:
        self.name = table_name
        self.table = table(table_name)
        self.salt = salt
        """The stack's salt: a contact is also looked up as the salted hash ``make forget``
        leaves for a person erased here (None: only as itself)."""

    def first_opted_out(self, contacts: Sequence[str]) -> str | None:
        """The first of ``contacts`` on the list (as itself, or as the salted hash of a person
        erased here: then that hash), or None (strongly consistent reads)."""
        salt = self.salt() if self.salt is not None and contacts else None
        hashed = [salted(c, salt) for c in contacts] if salt else []
        for contact in (*contacts, *hashed):
            answer = self.table.get_item(Key={"contact": contact}, ConsistentRead=True)
            if "Item" in answer:
                return contact
        return None

    def record(self, contact: str, *, source: str, event_id: str, at: str) -> bool:
        """Add ``contact``; the first opt-out is kept. True when this call added it."""
        item = {"contact": contact, "opted_out_at": at, "source": source, "event_id": event_id}
        return put_if_absent(self.table, item, "contact").won


class Customers:
    """rrs-customers: the sheet's mirror."""

    def __init__(self, table_name: str, customer_days: int) -> None:
        self.table = table(table_name)
        self.customer_days = customer_days

    def item(self, customer_id: str) -> dict[str, Any] | None:
        """The stored row as it is (for the owner's handover)."""
        if not customer_id:
            return None
        answer = self.table.get_item(Key={"customer_id": customer_id})
        found = answer.get("Item")
        return None if found is None else dict(found)

    def get(self, customer_id: str) -> Customer | None:
        found = self.item(customer_id)
        return None if found is None else Customer.from_item(found)

    def hashes(self) -> dict[str, str]:
        """Every mirrored row's sheet hash (one Scan, paged): what the sync compares against
        before it writes, because a conditional write that fails is billed as a write."""
        found: dict[str, str] = {}
        request: dict[str, Any] = {
            "ProjectionExpression": "customer_id, #h",
            "ExpressionAttributeNames": {"#h": "sheet_hash"},
        }
        while True:
            page = self.table.scan(**request)
            for item in page.get("Items", []):
                if isinstance(item.get("sheet_hash"), str):
                    found[str(item["customer_id"])] = str(item["sheet_hash"])
            last = page.get("LastEvaluatedKey")
            if not last:
                return found
            request["ExclusiveStartKey"] = last

    def upsert(self, customer_id: str, fields: Mapping[str, Any], row_hash: str, now: str) -> bool:
        """Write the sheet's fields (removing the ones now blank) unless the row is unchanged.

        Attributes other systems' functions never set survive, since this is an update, not a
        put. Returns True when the item changed.
        """
        # rrs-customers' TTL: a row expires customer_days after its last write; a row the sheet
        # still holds is mirrored again by the next sync (hashes() no longer lists it).
        written = dt.datetime.fromisoformat(now.replace("Z", "+00:00"))
        expires = int((written + dt.timedelta(days=self.customer_days)).timestamp())
        names: dict[str, str] = {"#h": "sheet_hash", "#ttl": CUSTOMERS_TTL}
        values: dict[str, Any] = {":h": row_hash, ":now": now, ":ttl": expires}
        sets = ["#h = :h", "synced_at = :now", "#ttl = :ttl"]
        removes: list[str] = []
        for index, (name, value) in enumerate(sorted(fields.items())):
            names[f"#f{index}"] = name
            if value is None or value == "":
                removes.append(f"#f{index}")
            else:
                values[f":f{index}"] = dynamo_safe(value)
                sets.append(f"#f{index} = :f{index}")
        expression = "SET " + ", ".join(sets)
        if removes:
            expression += " REMOVE " + ", ".join(removes)
        try:
            self.table.update_item(
                Key={"customer_id": customer_id},
                UpdateExpression=expression,
                ConditionExpression="attribute_not_exists(#h) OR #h <> :h",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
        except ClientError as err:
            if condition_failed(err):
                return False
            raise
        return True


class Jobs:
    """rrs-jobs: one item per completed job."""

    def __init__(self, table_name: str) -> None:
        self.table = table(table_name)

    def record(self, item: Mapping[str, Any]) -> bool:
        """Record the job once; True when this call wrote it."""
        return put_if_absent(self.table, dynamo_safe(dict(item)), "customer_id").won

    def get(self, customer_id: str, job_ts: str) -> dict[str, Any] | None:
        answer = self.table.get_item(Key={"customer_id": customer_id, "job_ts": job_ts})
        item = answer.get("Item")
        return None if item is None else dict(item)
