"""ler-backfill (nightly): re-enrich still-pending leads, re-sync ler-identity from the CRM."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.lead_enricher.backfilling import Backfill, PageSyncer, PushPageSyncer
from handlers.lead_enricher.contract import EVENT_BUS, BackfillSettings
from handlers.lead_enricher.enrich_cache import PendingMarkers
from handlers.lead_enricher.events import EventBridgeSink


def wire(config: BackfillSettings, clock: Clock, *, syncer: PageSyncer | None = None) -> Backfill:
    """``syncer`` re-syncs one page: ler-push invoked synchronously unless tests give another."""
    return Backfill(
        PendingMarkers(config.cache_table),
        EventBridgeSink(config.event_source, EVENT_BUS),
        syncer or PushPageSyncer(config.push_function_name),
    )


def run(job: Backfill, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, Any]:
    return job.run(context.get_remaining_time_in_millis).__dict__


handler = entry.handler(__name__, BackfillSettings, wire, run)
