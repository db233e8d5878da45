"""``make verify``'s check lead at the end of the chain: ler-push notes that it arrived.

ler-push creates no CRM contact for a check lead and writes neither ler-records nor
ler-identity. It makes the read its path makes for every lead (the CRM search by email, which
proves the Service Key and its ``crm.objects.contacts.read`` scope), then puts one small item
in ler-enrich-cache, keyed ``check#<lead id>``, with what each stage made of the lead, whether
the CRM answered (a refused key or scope is noted, not retried) and a TTL of an hour.
``make verify`` waits for the item, reports it and removes it.

The writer's grant is PutItem limited to partition keys under ``check#``
(``dynamodb:LeadingKeys``), so this path reaches no business item of the table (DynamoDB
Developer Guide, "Using IAM policy conditions for fine-grained access control":
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from handlers.common.aws_clients import table
from handlers.lead_enricher.contract import CACHE_KEY, CACHE_TTL, CHECK_ARRIVAL_PREFIX
from handlers.lead_enricher.lead import Lead

TTL_S = 3600
"""Should verify die before removing the item, the table's TTL does (within a day or two)."""


def key(lead_id: str) -> str:
    """The partition key of one check lead's arrival."""
    return f"{CHECK_ARRIVAL_PREFIX}{lead_id}"


def stages(lead: Lead, *, crm: str) -> dict[str, str]:
    """What each stage made of the lead (``crm``: what the CRM search answered): what
    ``make verify`` reports once it arrived."""
    enrichment, dedupe, screening = lead.enrichment, lead.dedupe, lead.screening
    return {
        "ler-normalize": ", ".join(lead.normalize.get("flags") or []) or "clean",
        "ler-enrich": f"{enrichment.status} ({enrichment.reason})" if enrichment else "none",
        "ler-dedupe": dedupe.verdict if dedupe else "none",
        "ler-filter": f"{screening.decision} ({screening.reason})" if screening else "none",
        "ler-push": crm,
    }


class CheckArrivals:
    """The ``check#`` items of ler-enrich-cache (the boto3 Table from the process-wide cache)."""

    def __init__(self, table_name: str) -> None:
        self.table_name = table_name

    def record(self, lead: Lead, now: dt.datetime, *, crm: str, crm_ok: bool) -> None:
        """``crm``: what the CRM search answered, in words; ``crm_ok``: whether it answered
        (a refused key or scope is noted, not retried: verify reports it)."""
        item: dict[str, Any] = {
            CACHE_KEY: key(lead.lead_id),
            "at": now.astimezone(dt.UTC).isoformat(),
            "stages": stages(lead, crm=crm),
            "crm_ok": crm_ok,
            CACHE_TTL: int(now.timestamp()) + TTL_S,
        }
        # A redelivered event writes the same item again: nothing to guard.
        table(self.table_name).put_item(Item=item)
