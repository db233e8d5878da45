"""ler-backfill (nightly): re-enrich still-pending leads, re-sync ler-identity from the CRM."""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.lead_enricher.backfilling import Backfill, PageSyncer, PushPageSyncer
from handlers.lead_enricher.contract import EVENT_BUS, BackfillSettings
from handlers.lead_enricher.enrich_cache import PendingMarkers
from handlers.lead_enricher.events import EventBridgeSink


def make_syncer(push_function: str) -> PageSyncer:
    """ler-push, invoked synchronously page by page (tests call it in-process instead)."""
    return PushPageSyncer(push_function)


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    config = settings.current(BackfillSettings)
    job = Backfill(
        PendingMarkers(config.cache_table),
        EventBridgeSink(config.event_source, EVENT_BUS),
        make_syncer(config.push_function_name),
    )
    return job.run(context.get_remaining_time_in_millis).__dict__
