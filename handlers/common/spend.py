"""Daily spend caps on paid calls: one counter per (system, kind, UTC day), reserved before the call.

A system that pays per call (a Bedrock model call, an enrichment lookup, an SMS) reserves one
unit before it calls: one conditional UpdateItem on the item ``spend#<kind>#<YYYY-MM-DD>`` of a
table the system already owns (its degradation-notes table, which has a TTL), adding one to
``spent`` only while ``spent`` is below the cap. DynamoDB applies a conditional update
atomically, so concurrent functions never spend past the cap together (DynamoDB Developer
Guide, "Condition expressions", atomic counters and conditional writes:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html).

A refused reservation means the call is not made; the caller takes its rules path or moves the
work to the next UTC day (``next_day``), never drops it. Each refusal is counted
(``SpendCapped``, by kind) and the first refusal of a (kind, day) also sets ``told_at`` on the
same item, conditionally: only the one writer that set it counts ``SpendCapReached``, which the
system's ``spend-cap`` alarm watches, so the alert address hears once per cap and day however
many functions reach it together. The grant is UpdateItem on these keys only
(``dynamodb:LeadingKeys`` ``spend#<kind>#*``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from handlers.common import metrics
from handlers.common.observability import get_logger
from handlers.common.transitions import condition_failed

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

    from handlers.common.degradations import Ledger

Kind = Literal["model", "lookup", "sms"]
KINDS: Final[tuple[Kind, ...]] = ("model", "lookup", "sms")
PREFIX: Final = "spend#"
KEEP_S: Final = 3 * 86400
"""A counter item outlives its day by two days (DynamoDB TTL), long enough to be looked at."""


def key_prefix(kind: Kind) -> str:
    """The partition-key prefix of one kind's counters (what the grant names)."""
    return f"{PREFIX}{kind}#"


def day_of(now: dt.datetime) -> str:
    """The UTC day a call at ``now`` is counted in, ``YYYY-MM-DD``."""
    return now.astimezone(dt.UTC).date().isoformat()


def next_day(now: dt.datetime) -> dt.datetime:
    """The start of the next UTC day: when a capped kind may spend again."""
    today = now.astimezone(dt.UTC).date()
    return dt.datetime.combine(today + dt.timedelta(days=1), dt.time(), dt.UTC)


class CapReached(Exception):
    """The day's cap of ``kind`` is spent: the call was not made; it may be made from ``resume_at``."""

    def __init__(self, kind: Kind, cap: int, resume_at: dt.datetime) -> None:
        super().__init__(f"daily {kind} cap of {cap} reached; resumes {resume_at.isoformat()}")
        self.kind = kind
        self.cap = cap
        self.resume_at = resume_at


@dataclass(frozen=True)
class SpendGuard:
    """The day's counters of one system's paid calls.

    Attributes:
        table: The system's table that holds the counters beside its other items.
        key_attribute: That table's partition key (a string).
        ttl_attribute: That table's TTL attribute (epoch seconds).
        caps: The daily cap of each kind this function spends (stack config).
        clock: The function's one clock.
    """

    table: Table
    key_attribute: str
    ttl_attribute: str
    caps: Mapping[Kind, int]
    clock: Callable[[], dt.datetime]

    @classmethod
    def beside(cls, ledger: Ledger, caps: Mapping[Kind, int], clock: Callable[[], dt.datetime]) -> SpendGuard:
        """Counters in the table that holds the system's degradation notes (it has a TTL)."""
        return cls(ledger.table, ledger.key_attribute, ledger.ttl_attribute, caps, clock)

    def reserve(self, kind: Kind) -> None:
        """Take one unit of today's ``kind``; raises CapReached (counted, told once) when none is left."""
        cap = self.caps[kind]
        now = self.clock()
        key = {self.key_attribute: f"{key_prefix(kind)}{day_of(now)}"}
        if cap > 0:
            try:
                self.table.update_item(
                    Key=key,
                    UpdateExpression="ADD spent :one SET #ttl = :expires",
                    ConditionExpression="attribute_not_exists(spent) OR spent < :cap",
                    ExpressionAttributeNames={"#ttl": self.ttl_attribute},
                    ExpressionAttributeValues={
                        ":one": 1,
                        ":cap": cap,
                        ":expires": int(now.timestamp()) + KEEP_S,
                    },
                )
                return
            except Exception as err:
                if not condition_failed(err):
                    raise
        first = self._first_refusal(key, now)
        metrics.spend_capped(kind, first=first)
        get_logger().warning("daily spend cap reached", extra={"kind": kind, "cap": cap, "first": first})
        raise CapReached(kind, cap, next_day(now))

    def _first_refusal(self, key: Mapping[str, str], now: dt.datetime) -> bool:
        """True for the one refusal of the day that set ``told_at`` (a conditional write)."""
        try:
            self.table.update_item(
                Key=dict(key),
                UpdateExpression="SET told_at = :now, #ttl = :expires",
                ConditionExpression="attribute_not_exists(told_at)",
                ExpressionAttributeNames={"#ttl": self.ttl_attribute},
                ExpressionAttributeValues={
                    ":now": int(now.timestamp()),
                    ":expires": int(now.timestamp()) + KEEP_S,
                },
            )
        except Exception as err:
            if condition_failed(err):
                return False
            raise
        return True
