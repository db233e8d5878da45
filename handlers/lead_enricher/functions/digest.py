"""ler-digest: the previous day's ler-junk drops, counted by reason, emailed through SES, each
listed lead with its signed rescue link to ler-rescue."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.degradations import Ledger
from handlers.common.link_tokens import Keyring
from handlers.common.secrets import get_secret
from handlers.lead_enricher.contract import DigestSettings
from handlers.lead_enricher.enrich_cache import degradation_ledger
from handlers.lead_enricher.junk_digest import RescueLinks, run_digest
from handlers.lead_enricher.mailer import Mailer
from handlers.lead_enricher.rescue import rescue_link
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


def links(config: DigestSettings, now: dt.datetime) -> RescueLinks:
    """Each lead's rescue link, signed with the keyring read once for this digest."""
    keyring = Keyring.from_secret_string(get_secret(config.rescue_key_secret_id))
    ttl = config.rescue_link_days * 86_400
    return RescueLinks(
        lambda key: rescue_link(keyring, config.rescue_url, key, ttl_seconds=ttl, now=now.timestamp()),
        config.rescue_link_days,
        config.timezone,
    )


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
        links=links(service.config, clock()),
        alert_email=service.config.alert_email,
        quiet=service.config.quiet_report,
    )
    return {
        "day": digest.day.isoformat(),
        "total": digest.total,
        "by_reason": dict(digest.by_reason),
    }


handler = entry.handler(__name__, DigestSettings, wire, run)
