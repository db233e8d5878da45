"""ler-backfill (nightly): re-enrich still-pending leads, re-sync ler-identity from the CRM.

ler-push also invokes it asynchronously (``{"action": "erase-deleted-contact", "crm_id": ...}``)
to erase a contact HubSpot deleted for good (``crm_deletions``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.lead_enricher.backfilling import Backfill, PageSyncer, PushPageSyncer
from handlers.lead_enricher.contract import (
    ERASE_DELETED_CONTACT_ACTION,
    EVENT_BUS,
    BackfillSettings,
)
from handlers.lead_enricher.crm_deletions import erase_deleted_contact, where
from handlers.lead_enricher.enrich_cache import PendingMarkers
from handlers.lead_enricher.events import EventBridgeSink


@dataclass(frozen=True)
class Nightly:
    job: Backfill
    erase: Callable[[str], dict[str, int]]


def wire(config: BackfillSettings, clock: Clock, *, syncer: PageSyncer | None = None) -> Nightly:
    """``syncer`` re-syncs one page: ler-push invoked synchronously unless tests give another."""
    job = Backfill(
        PendingMarkers(config.cache_table),
        EventBridgeSink(config.event_source, EVENT_BUS),
        syncer or PushPageSyncer(config.push_function_name),
    )
    return Nightly(job, lambda crm_id: erase_deleted_contact(crm_id, where(config)))


def run(service: Nightly, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, Any]:
    if event.get("action") == ERASE_DELETED_CONTACT_ACTION:
        return service.erase(str(event["crm_id"]))
    return service.job.run(context.get_remaining_time_in_millis).__dict__


handler = entry.handler(__name__, BackfillSettings, wire, run)
