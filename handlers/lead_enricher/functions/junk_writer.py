"""ler-junk-writer: le.junk -> one object in ler-junk with the lead and its reason.

The key is the lead's (``junk_log.junk_key``) and the write create-only, so a redelivered event
leaves the first record, and any rescue on it, as it is; ler-junk is the replay source if the
filter ever drops something real.
"""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.lead_enricher.contract import JunkWriterSettings
from handlers.lead_enricher.junk_log import write_junk
from handlers.lead_enricher.storage import ObjectStore


def wire(config: JunkWriterSettings, clock: Clock) -> tuple[ObjectStore, str]:
    return ObjectStore(), config.junk_bucket


def run(
    service: tuple[ObjectStore, str], event: dict[str, Any], context: Any, clock: Clock
) -> dict[str, str]:
    store, bucket = service
    return {"key": write_junk(event, store, bucket, clock())}


handler = entry.handler(__name__, JunkWriterSettings, wire, run)
