"""ler-enrich-cache: per-domain firmographics with a TTL, and the enrichment-pending markers.

Cache items are keyed by ``domain`` as the document says (``profile`` JSON, ``fetched_at``,
``ttl``). A lead whose provider call failed is remembered in the same table under the key
``pending#<lead_id>``: ler-enrich may only GetItem/PutItem here, so the marker is written with
PutItem and later overwritten as ``resolved``; ler-retry and ler-backfill find the pending ones
with a read-only Scan (the table holds one item per company domain: small). A marker only
moves forward: a write carrying an older pass than the stored one is refused.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from handlers.common.aws_clients import table
from handlers.common.degradations import Ledger
from handlers.common.transitions import condition_failed
from handlers.lead_enricher.contract import CACHE_KEY, CACHE_TTL
from handlers.lead_enricher.lead import Lead

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

PENDING_PREFIX = "pending#"
PENDING_TTL_DAYS = 14
RESOLVED_TTL_DAYS = 1
NOT_FOUND_TTL_DAYS = 7
"""A domain the provider does not know is asked again after a week, not after 90 days."""


class _OnTable:
    """Holds a table name; the boto3 Table comes from the process-wide cache on use."""

    def __init__(self, table_name: str) -> None:
        self.table_name = table_name

    @property
    def table(self) -> Table:
        return table(self.table_name)


def _epoch(moment: dt.datetime) -> int:
    return int(moment.timestamp())


@dataclass(frozen=True)
class CachedProfile:
    """One domain's cached answer: the profile (None: provider knows no such company)."""

    domain: str
    profile: dict[str, Any] | None
    source: str
    fetched_at: str


class EnrichCache(_OnTable):
    """GetItem / PutItem of domain profiles."""

    def __init__(self, table_name: str, ttl_days: int) -> None:
        super().__init__(table_name)
        self.ttl_days = ttl_days

    def get(self, domain: str, now: dt.datetime) -> CachedProfile | None:
        """The cached answer, or None on a miss or an expired item (TTL deletion is lazy)."""
        item = self.table.get_item(Key={"domain": domain}).get("Item")
        if not item or int(str(item.get("ttl", 0))) <= _epoch(now):
            return None
        profile = json.loads(str(item["profile"])) if item.get("profile") else None
        return CachedProfile(
            domain=domain,
            profile=profile,
            source=str(item.get("source", "")),
            fetched_at=str(item.get("fetched_at", "")),
        )

    def put(
        self, domain: str, profile: dict[str, Any] | None, source: str, now: dt.datetime
    ) -> CachedProfile:
        days = self.ttl_days if profile is not None else min(self.ttl_days, NOT_FOUND_TTL_DAYS)
        item: dict[str, Any] = {
            "domain": domain,
            "source": source,
            "fetched_at": now.isoformat(),
            "ttl": _epoch(now + dt.timedelta(days=days)),
        }
        if profile is not None:
            item["profile"] = json.dumps(profile, sort_keys=True, default=str)
        self.table.put_item(Item=item)
        return CachedProfile(domain, profile, source, item["fetched_at"])


@dataclass(frozen=True)
class PendingLead:
    """A lead waiting for the provider: the lead as normalised, and its last pass."""

    lead: Lead
    pass_no: int
    reason: str
    updated_at: str
    retry_at: str = ""
    """When the provider asked us to come back (its 429 wait); empty: no wait asked."""

    def next_pass(self) -> Lead:
        """The lead ready to go round again as le.normalized, one pass further."""
        lead = Lead.from_json(self.lead.to_json())
        lead.pass_no = self.pass_no + 1
        lead.enrichment = None
        return lead


class PendingMarkers(_OnTable):
    """The ``pending#`` items: PutItem to mark and resolve, Scan to find."""

    def _put(
        self,
        lead: Lead,
        status: str,
        reason: str,
        ttl_days: int,
        now: dt.datetime,
        retry_at: dt.datetime | None = None,
    ) -> bool:
        from botocore.exceptions import ClientError

        item: dict[str, Any] = {
            "domain": f"{PENDING_PREFIX}{lead.lead_id}",
            "status": status,
            "reason": reason,
            "pass_no": lead.pass_no,
            "lead": json.dumps(lead.to_json(), separators=(",", ":"), default=str),
            "updated_at": now.isoformat(),
            "ttl": _epoch(now + dt.timedelta(days=ttl_days)),
        }
        if retry_at is not None:
            item["retry_at"] = retry_at.isoformat()
        try:
            self.table.put_item(
                Item=item,
                ConditionExpression="attribute_not_exists(#d) OR pass_no <= :p",
                ExpressionAttributeNames={"#d": "domain"},
                ExpressionAttributeValues={":p": lead.pass_no},
            )
        except ClientError as err:
            if not condition_failed(err):
                raise
            return False  # a newer pass already wrote the marker: leave it alone
        return True

    def mark(
        self, lead: Lead, reason: str, now: dt.datetime, retry_at: dt.datetime | None = None
    ) -> bool:
        """Remember ``lead`` as pending (its enrichment to be retried, not before ``retry_at``)."""
        return self._put(lead, "pending", reason, PENDING_TTL_DAYS, now, retry_at)

    def resolve(self, lead: Lead, now: dt.datetime) -> bool:
        """Record that this pass enriched the lead, so no job retries it again."""
        return self._put(lead, "resolved", "", RESOLVED_TTL_DAYS, now)

    def pending(self) -> list[PendingLead]:
        """Every lead still pending (Scan with a filter, page by page)."""
        found: list[PendingLead] = []
        kwargs: dict[str, Any] = {
            "FilterExpression": "begins_with(#d, :p) AND #s = :pending",
            "ExpressionAttributeNames": {"#d": "domain", "#s": "status"},
            "ExpressionAttributeValues": {":p": PENDING_PREFIX, ":pending": "pending"},
        }
        while True:
            page = self.table.scan(**kwargs)
            for item in page.get("Items", []):
                found.append(
                    PendingLead(
                        lead=Lead.from_json(json.loads(str(item["lead"]))),
                        pass_no=int(str(item.get("pass_no", 0))),
                        reason=str(item.get("reason", "")),
                        updated_at=str(item.get("updated_at", "")),
                        retry_at=str(item.get("retry_at", "")),
                    )
                )
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def degradation_ledger(cache_table: str) -> Ledger:
    """ler's degradation notes (handlers/common/degradations.py), kept in ler-enrich-cache
    beside the ``pending#`` markers: its TTL removes them once the cause is fixed."""
    return Ledger(table(cache_table), CACHE_KEY, CACHE_TTL)
