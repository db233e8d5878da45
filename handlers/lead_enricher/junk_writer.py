"""ler-junk-writer: le.junk -> one object in ler-junk with the lead and its reason.

The key is the lead's (``junk_log.junk_key``), so a redelivered event rewrites the same
object; ler-junk is the replay source if the filter ever drops something real.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from handlers.common.observability import get_logger, logged
from handlers.lead_enricher.contract import JUNK
from handlers.lead_enricher.events import lead_from_event
from handlers.lead_enricher.junk_log import junk_entry, junk_key
from handlers.lead_enricher.storage import ObjectStore

_store: ObjectStore | None = None


def write_junk(event: dict[str, Any], store: ObjectStore, bucket: str, now: dt.datetime) -> str:
    """Keep one dropped lead; return its key."""
    lead = lead_from_event(event, JUNK)
    screening = lead.screening
    reason = screening.reason if screening else "unknown"
    stage = screening.stage if screening else "filter"
    key = junk_key(lead)
    store.put_json(bucket, key, junk_entry(lead, reason=reason, stage=stage, dropped_at=now))
    get_logger().info("lead dropped", lead_id=lead.lead_id, reason=reason, key=key)
    return key


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    global _store
    _store = _store or ObjectStore()
    key = write_junk(event, _store, os.environ["JUNK_BUCKET"], dt.datetime.now(dt.UTC))
    return {"key": key}
