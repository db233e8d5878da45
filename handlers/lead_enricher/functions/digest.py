"""ler-digest: the previous day's ler-junk drops, counted by reason, emailed through SES."""

from __future__ import annotations

import datetime as dt
from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.lead_enricher.contract import DigestSettings
from handlers.lead_enricher.junk_digest import run_digest
from handlers.lead_enricher.mailer import Mailer
from handlers.lead_enricher.storage import ObjectStore


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Scheduled daily; ``{"day": "YYYY-MM-DD"}`` in the input digests the day before it."""
    config = settings.current(DigestSettings)
    given = event.get("day") if isinstance(event, dict) else None
    current = dt.date.fromisoformat(str(given)) if given else dt.datetime.now(dt.UTC).date()
    digest = run_digest(
        ObjectStore(),
        Mailer(config.sender_email),
        bucket=config.junk_bucket,
        recipient=config.digest_recipient,
        today=current,
    )
    return {
        "day": digest.day.isoformat(),
        "total": digest.total,
        "by_reason": dict(digest.by_reason),
    }
