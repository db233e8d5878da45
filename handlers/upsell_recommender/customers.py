"""upsr-customers: purchase history and the frequency cap, and upsr-optout lookups.

The cap is exact over a rolling 30 days: the item keeps the timestamps of the nudges of the last
30 days (``recent_nudges``), with ``nudge_count`` and ``last_nudged_at`` beside them for people
reading the table. Stamping a nudge is read-compute-write with an optimistic version
(``cap_version``), so two senders nudging the same customer at once cannot both pass a full cap.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from handlers.common.forgotten import salted
from handlers.common.transitions import condition_failed
from handlers.upsell_recommender.contract import CUSTOMERS_TTL
from handlers.upsell_recommender.domain import NUDGE_CAP_WINDOW_S

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

MAX_HISTORY_SKUS = 500
"""History handed to the picker; a small shop's customer rarely owns more distinct SKUs."""


def recent_nudges(customer: Mapping[str, Any] | None, now: float) -> list[int]:
    """Nudge times (unix seconds) of the last 30 days, oldest first."""
    if not customer:
        return []
    floor = now - NUDGE_CAP_WINDOW_S
    times = [int(t) for t in customer.get("recent_nudges") or [] if int(t) > floor]
    return sorted(times)


def is_capped(customer: Mapping[str, Any] | None, now: float, max_nudges: int) -> bool:
    """True when the customer already had ``max_nudges`` nudges in the last 30 days."""
    return len(recent_nudges(customer, now)) >= max_nudges


def owned_skus(customer: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The SKUs the customer bought before, sorted, at most ``MAX_HISTORY_SKUS``."""
    if not customer:
        return ()
    return tuple(sorted(str(s) for s in customer.get("owned_skus") or ())[:MAX_HISTORY_SKUS])


def get_customer(table: Table, customer_id: str) -> dict[str, Any] | None:
    """The customer's item, or None."""
    item = table.get_item(Key={"customer_id": customer_id}).get("Item")
    return dict(item) if item else None


def is_forgotten(table: Table, salt: str, values: Iterable[str]) -> bool:
    """Whether upsr-optout holds the salted hash of any of ``values`` (the customer id, the
    order's phone or email): a person ``make forget`` or customers/redact erased here."""
    return any(
        "Item" in table.get_item(Key={"customer_id": salted(v, salt)}, ConsistentRead=True, ProjectionExpression="customer_id")
        for v in values
    )


def is_opted_out(table: Table, customer_id: str) -> bool:
    """Whether upsr-optout holds the customer (strongly consistent: an opt-out is immediate)."""
    answer = table.get_item(
        Key={"customer_id": customer_id},
        ConsistentRead=True,
        ProjectionExpression="customer_id",
    )
    return "Item" in answer


def record_purchase(
    table: Table, customer_id: str, skus: Iterable[str], now: float, *, expires_at: int
) -> None:
    """Add the order's SKUs to the customer's history, and move its expiry (upsr-customers'
    TTL) to ``expires_at``: the history lives ``customerDays`` after the last order.

    ``ADD`` to a string set is idempotent, so a duplicate webhook that got this far changes
    nothing; it never touches the cap attributes.
    """
    wanted = {s for s in skus if s}
    if not wanted:
        return
    table.update_item(
        Key={"customer_id": customer_id},
        UpdateExpression="ADD owned_skus :skus SET last_order_at = :now, #ttl = :ttl",
        ExpressionAttributeNames={"#ttl": CUSTOMERS_TTL},
        ExpressionAttributeValues={":skus": wanted, ":now": int(now), ":ttl": expires_at},
    )


@dataclass(frozen=True)
class CapStamp:
    """The write that counts one more nudge, guarded by the cap version it was computed from."""

    update: str
    condition: str
    values: Mapping[str, Any]


def next_cap_stamp(
    item: Mapping[str, Any] | None, now: float, max_nudges: int
) -> CapStamp | None:
    """The stamp for one more nudge given the customer's item; None when the cap is full."""
    recent = recent_nudges(item, now)
    if len(recent) >= max_nudges:
        return None
    version = int((item or {}).get("cap_version", 0))
    values: dict[str, Any] = {
        ":recent": [*recent, int(now)],
        ":count": len(recent) + 1,
        ":now": int(now),
        ":next": version + 1,
    }
    if version:
        condition = "cap_version = :version"
        values[":version"] = version
    else:
        condition = "attribute_not_exists(cap_version)"
    return CapStamp(
        "SET recent_nudges = :recent, nudge_count = :count, last_nudged_at = :now, "
        "cap_version = :next",
        condition,
        values,
    )


def stamp_nudge(
    table: Table, customer_id: str, now: float, max_nudges: int, *, attempts: int = 4
) -> bool:
    """Count one nudge against the cap; False when the cap is full (nothing is written).

    Each attempt reads the item and writes it back on the condition that nobody else wrote the
    cap since (``cap_version``). Losing ``attempts`` times in a row is treated as capped: under
    doubt the customer gets fewer nudges, never more. (upsr-sender stamps inside its claim,
    ``offers.claim_for_send``, with the same ``next_cap_stamp``.)
    """
    for _ in range(attempts):
        item: Mapping[str, Any] | None = table.get_item(
            Key={"customer_id": customer_id}, ConsistentRead=True
        ).get("Item")
        stamp = next_cap_stamp(item, now, max_nudges)
        if stamp is None:
            return False
        try:
            table.update_item(
                Key={"customer_id": customer_id},
                UpdateExpression=stamp.update,
                ConditionExpression=stamp.condition,
                ExpressionAttributeValues=dict(stamp.values),
            )
        except ClientError as err:
            if not condition_failed(err):
                raise
            continue
        return True
    return False
