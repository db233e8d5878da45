"""upsr-offers: the offer items and every guarded move of their ``state``.

The state field is the single source of truth for where an offer is, and each move is one
conditional write (``handlers.common.transitions``):

* one offer per order: the picker creates ``ofr-<order id>`` only if absent;
* one nudge per offer: the sender moves chosen -> sent, and only the winner sends;
* one terminal state per offer: a tap and the sweep both move only an offer still ``sent``.

The ``state-send_at`` index (partition ``state``, sort ``send_at``) serves the sender (chosen,
due) and the sweep (sent, window over; counts for the roll-up). Items carry ``expires_at``, the
table's TTL attribute: the end of the attribution window plus the retention period, so the
contact details an offer holds do not outlive their use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from handlers.common import metrics
from handlers.common.transitions import (
    TransitionResult,
    condition_failed,
    old_item,
    put_if_absent,
    transact,
    transition,
    tx_condition_check,
    tx_update,
)
from handlers.common.unconfirmed_sends import LOOKBACK, UNCONFIRMED_AFTER
from handlers.upsell_recommender.contract import OFFERS_TTL
from handlers.upsell_recommender.customers import next_cap_stamp
from handlers.upsell_recommender.domain import OfferState, to_decimal

if TYPE_CHECKING:
    from decimal import Decimal

    from mypy_boto3_dynamodb.service_resource import Table

STATE = "state"
REPORT_MARKER_PREFIX = "report#"
"""Daily roll-up markers share the table; they have no ``state`` so the index never sees them."""


def put_offer(table: Table, item: Mapping[str, Any]) -> bool:
    """Create the order's offer (or no-fit record); False when the order already has one."""
    return put_if_absent(table, item, "offer_id").won


def _query_index(
    table: Table,
    index: str,
    state: OfferState,
    *,
    until: int,
    since: int | None = None,
    filter_expression: str | None = None,
    filter_values: Mapping[str, Any] | None = None,
    limit: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Items of ``state`` with ``since <= send_at <= until`` from the index, oldest first."""
    names = {"#s": STATE, "#t": "send_at"}
    values: dict[str, Any] = {":s": state.value, ":until": until}
    if since is None:
        key = "#s = :s AND #t <= :until"
    else:
        key = "#s = :s AND #t BETWEEN :since AND :until"
        values[":since"] = since
    request: dict[str, Any] = {
        "IndexName": index,
        "KeyConditionExpression": key,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
    if filter_expression:
        request["FilterExpression"] = filter_expression
        values.update(filter_values or {})
    yielded = 0
    while True:
        page = table.query(**request)
        for item in page.get("Items", []):
            yield dict(item)
            yielded += 1
            if limit is not None and yielded >= limit:
                return
        last = page.get("LastEvaluatedKey")
        if not last:
            return
        request["ExclusiveStartKey"] = last


def due_offers(table: Table, index: str, now: float, limit: int) -> Iterator[dict[str, Any]]:
    """Chosen offers whose send time has come, oldest first, at most ``limit``.

    The index is eventually consistent: an offer just moved to ``sent`` may still be listed as
    chosen. That is harmless, because the move itself is conditional.
    """
    return _query_index(table, index, OfferState.CHOSEN, until=int(now), limit=limit)


@dataclass(frozen=True)
class SendClaim:
    """What the claim of one nudge did.

    Attributes:
        won: The offer moved chosen -> sent and the cap was stamped, together.
        refused: Why not: ``lost-race`` (the offer had moved), ``opted-out``, ``capped``, or
            ``conflict`` (the cap kept moving under us; the offer stays chosen for the next run).
    """

    won: bool
    refused: str | None = None


def claim_for_send(
    table: Table,
    offer_id: str,
    now: float,
    window_s: int,
    retention_s: int,
    *,
    customers: Table,
    optout: Table,
    customer_id: str,
    max_nudges: int,
    attempts: int = 4,
) -> SendClaim:
    """chosen -> sent, the cap stamp and the opt-out check as one transaction; one winner.

    The three are one guarded write so that an opt-out stored at any moment before it wins,
    and no cap slot is spent without the claim (or the reverse). The cap is read, then written
    back on its version (``cap_version``); losing the version re-reads and tries again.
    """

    window_ends = int(now) + window_s
    for _ in range(attempts):
        answer = customers.get_item(Key={"customer_id": customer_id}, ConsistentRead=True)
        stamp = next_cap_stamp(answer.get("Item"), now, max_nudges)
        if stamp is None:
            return SendClaim(False, "capped")
        result = transact(
            table,
            [
                tx_update(
                    table.name,
                    {"offer_id": offer_id},
                    "SET #s = :sent, sent_at = :now, window_ends_at = :ends, #ttl = :ttl",
                    "#s = :chosen",
                    {
                        ":sent": OfferState.SENT.value,
                        ":chosen": OfferState.CHOSEN.value,
                        ":now": int(now),
                        ":ends": window_ends,
                        ":ttl": window_ends + retention_s,
                    },
                    {"#s": STATE, "#ttl": OFFERS_TTL},
                ),
                tx_update(
                    customers.name,
                    {"customer_id": customer_id},
                    stamp.update,
                    stamp.condition,
                    stamp.values,
                ),
                tx_condition_check(
                    optout.name,
                    {"customer_id": customer_id},
                    "attribute_not_exists(#c)",
                    names={"#c": "customer_id"},
                ),
            ],
        )
        if result.won:
            return SendClaim(True)
        if result.reasons[2:3] == ("ConditionalCheckFailed",):
            return SendClaim(False, "opted-out")
        if result.reasons[:1] == ("ConditionalCheckFailed",):
            return SendClaim(False, "lost-race")
        # The cap's version moved (another nudge to this customer), or a conflict: re-read.
    return SendClaim(False, "conflict")


def confirm_delivered(table: Table, offer_id: str, now: float, message_id: str) -> None:
    """Stamp the offer ``delivered_at``: the channel accepted the nudge."""
    table.update_item(
        Key={"offer_id": offer_id},
        UpdateExpression="SET delivered_at = :now, message_id = :id",
        ConditionExpression="attribute_exists(offer_id)",
        ExpressionAttributeValues={":now": int(now), ":id": message_id},
    )


def report_unconfirmed(table: Table, index: str, now: float) -> list[dict[str, Any]]:
    """Mark each sent offer claimed over ``UNCONFIRMED_AFTER`` ago and never confirmed sent
    (once: the first sweep wins the mark); returns the offers this call marked."""
    cutoff = int(now - UNCONFIRMED_AFTER.total_seconds())
    found = _query_index(
        table,
        index,
        OfferState.SENT,
        since=int(now - LOOKBACK.total_seconds()),
        until=cutoff,
        filter_expression=(
            "attribute_not_exists(delivered_at) AND attribute_not_exists(unconfirmed_at) "
            "AND sent_at <= :cutoff"
        ),
        filter_values={":cutoff": cutoff},
    )
    marked: list[dict[str, Any]] = []
    for offer in found:
        result = _update_if(
            table,
            str(offer["offer_id"]),
            "SET unconfirmed_at = :now",
            "#s = :sent AND attribute_not_exists(delivered_at) "
            "AND attribute_not_exists(unconfirmed_at)",
            {":now": int(now), ":sent": OfferState.SENT.value},
        )
        if result:
            marked.append(offer)
    return marked


def _update_if(
    table: Table, offer_id: str, update: str, condition: str, values: Mapping[str, Any]
) -> bool:
    """One conditional update of the offer; False when the condition did not hold."""
    try:
        table.update_item(
            Key={"offer_id": offer_id},
            UpdateExpression=update,
            ConditionExpression=condition,
            ExpressionAttributeNames={"#s": STATE},
            ExpressionAttributeValues=dict(values),
        )
    except ClientError as err:
        if condition_failed(err):
            return False
        raise
    return True


def unconfirmed_offers(table: Table, index: str, since: int, until: int) -> list[dict[str, Any]]:
    """Offers of any state reported unconfirmed between ``since`` and ``until``."""
    found: list[dict[str, Any]] = []
    for state in (OfferState.SENT, OfferState.IGNORED, OfferState.TAKEN, OfferState.OUT_OF_WINDOW):
        found.extend(
            _query_index(
                table,
                index,
                state,
                since=since - int(LOOKBACK.total_seconds()),
                until=until,
                filter_expression="unconfirmed_at BETWEEN :from AND :to",
                filter_values={":from": since, ":to": until},
            )
        )
    return sorted(found, key=lambda o: (int(o.get("send_at", 0)), str(o["offer_id"])))


def postpone(table: Table, offer_id: str, until: float, expires_at: float, reason: str) -> TransitionResult:
    """chosen -> chosen, due again at ``until`` (a spent daily SMS cap): the offer waits, kept
    alive to ``expires_at``, and the sender releases it then."""
    return transition(
        table,
        {"offer_id": offer_id},
        STATE,
        OfferState.CHOSEN.value,
        OfferState.CHOSEN.value,
        {"send_at": int(until), "postponed_reason": reason, OFFERS_TTL: int(expires_at)},
    )


def suppress(
    table: Table, offer_id: str, expected: OfferState, reason: str, now: float
) -> TransitionResult:
    """chosen|sent -> suppressed: no nudge will (or did) go out for this offer."""
    result = transition(
        table,
        {"offer_id": offer_id},
        STATE,
        expected.value,
        OfferState.SUPPRESSED.value,
        {"suppressed_reason": reason, "closed_at": int(now)},
    )
    if result.won:
        metrics.count("Offers", 1, OfferState.SUPPRESSED.value)
    return result


@dataclass(frozen=True)
class TapResult:
    """What recording a tap did.

    Attributes:
        found: The offer exists.
        moved_to: ``taken`` or ``out-of-window`` when this tap moved the offer; None when the
            offer was already closed (by an earlier tap, or by the sweep) or never sent.
        item: The offer as it is now (after the move) or as found.
    """

    found: bool
    moved_to: OfferState | None
    item: Mapping[str, Any] | None


def record_tap(table: Table, offer_id: str, now: float) -> TapResult:
    """Move a ``sent`` offer to ``taken`` inside its window or ``out-of-window`` after it.

    Never creates an item: both writes are conditional on the offer being ``sent``. The first
    write also requires the window to be open, so the clock check and the move are one atomic
    step; a loser learns the current item from the failed write, so nothing is read first.
    """
    try:
        answer = table.update_item(
            Key={"offer_id": offer_id},
            UpdateExpression="SET #s = :taken, tapped_at = :now, closed_at = :now",
            ConditionExpression="#s = :sent AND window_ends_at > :now",
            ExpressionAttributeNames={"#s": STATE},
            ExpressionAttributeValues={
                ":taken": OfferState.TAKEN.value,
                ":sent": OfferState.SENT.value,
                ":now": int(now),
            },
            ReturnValues="ALL_NEW",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
        metrics.count("Offers", 1, OfferState.TAKEN.value)
        metrics.count("Taps", 1, "in")
        return TapResult(True, OfferState.TAKEN, answer.get("Attributes"))
    except ClientError as err:
        if not condition_failed(err):
            raise
        current = old_item(err)
    if current is None:
        return TapResult(False, None, None)
    if current.get(STATE) != OfferState.SENT.value:
        return TapResult(True, None, current)
    late = transition(
        table,
        {"offer_id": offer_id},
        STATE,
        OfferState.SENT.value,
        OfferState.OUT_OF_WINDOW.value,
        {"tapped_at": int(now), "closed_at": int(now)},
    )
    if late.won:
        metrics.count("Offers", 1, OfferState.OUT_OF_WINDOW.value)
        metrics.count("Taps", 1, "out")
    return TapResult(True, OfferState.OUT_OF_WINDOW if late.won else None, late.item or current)


def expired_sent_offers(
    table: Table, index: str, now: float, window_s: int
) -> Iterator[dict[str, Any]]:
    """Sent offers whose attribution window has ended.

    An offer is sent at or after its ``send_at``, so its window cannot have ended unless
    ``send_at <= now - window``: the key condition narrows to those, the filter checks the
    exact ``window_ends_at``.
    """
    return _query_index(
        table,
        index,
        OfferState.SENT,
        until=int(now) - window_s,
        filter_expression="window_ends_at <= :now",
        filter_values={":now": int(now)},
    )


def close_ignored(table: Table, offer_id: str, now: float) -> TransitionResult:
    """sent -> ignored; loses (harmlessly) to a tap that got there first."""
    result = transition(
        table,
        {"offer_id": offer_id},
        STATE,
        OfferState.SENT.value,
        OfferState.IGNORED.value,
        {"closed_at": int(now)},
    )
    if result.won:
        metrics.count("Offers", 1, OfferState.IGNORED.value)
    return result


def count_by_state(table: Table, index: str, since: int, until: int) -> dict[OfferState, int]:
    """How many offers of each state have ``send_at`` in ``[since, until]`` (index COUNT)."""
    counts: dict[OfferState, int] = {}
    for state in OfferState:
        request: dict[str, Any] = {
            "IndexName": index,
            "KeyConditionExpression": "#s = :s AND #t BETWEEN :since AND :until",
            "ExpressionAttributeNames": {"#s": STATE, "#t": "send_at"},
            "ExpressionAttributeValues": {":s": state.value, ":since": since, ":until": until},
            "Select": "COUNT",
        }
        total = 0
        while True:
            page = table.query(**request)
            total += int(page.get("Count", 0))
            last = page.get("LastEvaluatedKey")
            if not last:
                break
            request["ExclusiveStartKey"] = last
        counts[state] = total
    return counts


def claim_daily_report(table: Table, day: str, now: float, retention_s: int) -> bool:
    """First caller for ``day`` (``YYYY-MM-DD``) wins the right to send that day's roll-up."""
    marker = {
        "offer_id": f"{REPORT_MARKER_PREFIX}{day}",
        "kind": "report-marker",
        "claimed_at": int(now),
        OFFERS_TTL: int(now) + retention_s,
    }
    return put_if_absent(table, marker, "offer_id").won


REPORT_MARK = f"{REPORT_MARKER_PREFIX}mark"
"""The roll-up's high-water mark: up to when the last roll-up reported, and the running totals
since the first. No TTL: it outlives every offer, so a sale is never reported twice."""


@dataclass(frozen=True)
class Activity:
    """What happened to offers between two roll-ups (each sale in exactly one of them).

    Attributes:
        nudged: Offers whose nudge went out (``sent_at``) in the period.
        taps: Taps recorded in the period (in time or late).
        taken: Add-ons taken (tapped in time) in the period.
        closed: Windows closed in the period (taken, tapped late or not tapped).
        value: Taken add-ons' prices when offered, per currency.
    """

    nudged: int = 0
    taps: int = 0
    taken: int = 0
    closed: int = 0
    value: Mapping[str, Decimal] = field(default_factory=dict)

    def plus(self, other: Activity) -> Activity:
        value = dict(self.value)
        for currency, amount in other.value.items():
            value[currency] = value.get(currency, Decimal(0)) + amount
        return Activity(self.nudged + other.nudged, self.taps + other.taps, self.taken + other.taken,
                        self.closed + other.closed, value)

    @property
    def empty(self) -> bool:
        return not (self.nudged or self.taps or self.taken or self.closed)


@dataclass(frozen=True)
class ReportMark:
    """The last roll-up's ``until``, the running totals and since when they run."""

    until: int
    totals: Activity
    since: int


def report_mark(table: Table) -> ReportMark | None:
    """The high-water mark, or None before the first roll-up."""
    found = table.get_item(Key={"offer_id": REPORT_MARK}, ConsistentRead=True).get("Item")
    if not found:
        return None
    item: dict[str, Any] = dict(found)
    totals = Activity(int(item.get("nudged", 0)), int(item.get("taps", 0)), int(item.get("taken", 0)),
                      int(item.get("closed", 0)),
                      {str(k): Decimal(str(v)) for k, v in dict(item.get("value") or {}).items()})
    return ReportMark(int(item["until"]), totals, int(item.get("totals_since", item["until"])))


def save_report_mark(table: Table, mark: ReportMark) -> None:
    """Move the mark (before the mail goes: a failed mail loses a day's list, never repeats it)."""
    table.put_item(Item={
        "offer_id": REPORT_MARK, "kind": "report-mark", "until": mark.until, "totals_since": mark.since,
        "nudged": mark.totals.nudged, "taps": mark.totals.taps, "taken": mark.totals.taken,
        "closed": mark.totals.closed, "value": {k: v for k, v in mark.totals.value.items()},
    })


def activity(table: Table, index: str, since: int, until: int) -> Activity:
    """What happened in ``[since, until)``, each by when it happened (``sent_at``, ``tapped_at``,
    ``closed_at``), so consecutive periods never share one. The index narrows by state; the
    filter by time (an offer lives its window plus ``offerRetentionDays``, so this reads at most
    that many days of offers)."""
    last = until - 1
    between = {":from": since, ":to": last}
    nudged = sum(1 for s in (OfferState.SENT, OfferState.TAKEN, OfferState.OUT_OF_WINDOW, OfferState.IGNORED)
                 for _ in _query_index(table, index, s, until=last,
                                       filter_expression="sent_at BETWEEN :from AND :to",
                                       filter_values=between))
    taken = list(_query_index(table, index, OfferState.TAKEN, until=last,
                              filter_expression="tapped_at BETWEEN :from AND :to", filter_values=between))
    late = sum(1 for _ in _query_index(table, index, OfferState.OUT_OF_WINDOW, until=last,
                                       filter_expression="tapped_at BETWEEN :from AND :to",
                                       filter_values=between))
    closed = sum(1 for s in (OfferState.TAKEN, OfferState.OUT_OF_WINDOW, OfferState.IGNORED)
                 for _ in _query_index(table, index, s, until=last,
                                       filter_expression="closed_at BETWEEN :from AND :to",
                                       filter_values=between))
    value: dict[str, Decimal] = {}
    for item in taken:
        price = to_decimal(item.get("price"))
        if price is not None:
            currency = str(item.get("currency") or "").upper() or "?"
            value[currency] = value.get(currency, Decimal(0)) + price
    return Activity(nudged, len(taken) + late, len(taken), closed, value)
