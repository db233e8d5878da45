"""ler-digest: the previous day's ler-junk drops, counted by reason, emailed through SES."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.degradations import Ledger
from handlers.lead_enricher.contract import DigestSettings
from handlers.lead_enricher.enrich_cache import degradation_ledger
from handlers.lead_enricher.junk_digest import run_digest
from handlers.lead_enricher.mailer import Mailer
from handlers.lead_enricher.storage import ObjectStore


@dataclass(frozen=True)
class Digest:
    config: DigestSettings
    store: ObjectStore
    mailer: Mailer
    ledger: Ledger


def wire(config: DigestSettings, clock: Clock) -> Digest:
    ledger = degradation_ledger(config.cache_table)
    return Digest(config, ObjectStore(), Mailer(config.sender_email), ledger)


def run(service: Digest, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, Any]:
    """Scheduled daily; ``{"day": "YYYY-MM-DD"}`` in the input digests the day before it."""
    given = event.get("day") if isinstance(event, dict) else None
    current = dt.date.fromisoformat(str(given)) if given else clock().date()
    digest = run_digest(
        service.store,
        service.mailer,
        bucket=service.config.junk_bucket,
        recipient=service.config.digest_recipient,
        today=current,
        ledger=service.ledger,
    )
    return {
        "day": digest.day.isoformat(),
        "total": digest.total,
        "by_reason": dict(digest.by_reason),
    }


handler = entry.handler(__name__, DigestSettings, wire, run)
