"""ler-junk-writer: le.junk -> one object in ler-junk with the lead and its reason.

The key is the lead's (``junk_log.junk_key``) and the write create-only, so a redelivered event
leaves the first record, and any rescue on it, as it is; ler-junk is the replay source if the
filter ever drops something real. A dropped lead of a person ``make forget`` erased after it
was received is not kept (``forgotten_leads``).
"""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.lead_enricher.contract import JUNK, JunkWriterSettings
from handlers.lead_enricher.events import lead_from_event
from handlers.lead_enricher.forgotten_leads import ForgottenLeads
from handlers.lead_enricher.junk_log import write_junk
from handlers.lead_enricher.storage import ObjectStore


def wire(config: JunkWriterSettings, clock: Clock) -> tuple[ObjectStore, str, ForgottenLeads]:
    forgotten = ForgottenLeads.of(config.identity_table, config.forget_salt_secret_id)
    return ObjectStore(), config.junk_bucket, forgotten


def run(
    service: tuple[ObjectStore, str, ForgottenLeads], event: dict[str, Any], context: Any, clock: Clock
) -> dict[str, str | None]:
    store, bucket, forgotten = service
    if forgotten.drop(lead_from_event(event, JUNK), "junk-writer"):
        return {"key": None}
    return {"key": write_junk(event, store, bucket, clock())}


handler = entry.handler(__name__, JunkWriterSettings, wire, run)
