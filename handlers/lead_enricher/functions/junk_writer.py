"""ler-junk-writer: le.junk -> one object in ler-junk with the lead and its reason.

The key is the lead's (``junk_log.junk_key``), so a redelivered event rewrites the same
object; ler-junk is the replay source if the filter ever drops something real.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.lead_enricher.contract import JunkWriterSettings
from handlers.lead_enricher.junk_log import write_junk
from handlers.lead_enricher.storage import ObjectStore

_store: ObjectStore | None = None


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    global _store
    _store = _store or ObjectStore()
    bucket = settings.current(JunkWriterSettings).junk_bucket
    return {"key": write_junk(event, _store, bucket, dt.datetime.now(dt.UTC))}
