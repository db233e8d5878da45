"""ler-enrich: le.normalized -> firmographics for the lead's company domain -> le.enriched."""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.lead_enricher.contract import EVENT_BUS, EnrichSettings
from handlers.lead_enricher.enrich_cache import EnrichCache, PendingMarkers
from handlers.lead_enricher.enriching import Enricher, make_provider
from handlers.lead_enricher.events import EventBridgeSink

_enricher: Enricher | None = None


def _service() -> Enricher:
    global _enricher
    if _enricher is None:
        config = settings.current(EnrichSettings)
        _enricher = Enricher(
            EnrichCache(config.cache_table, config.cache_ttl_days),
            PendingMarkers(config.cache_table),
            make_provider(config),
            EventBridgeSink(config.event_source, EVENT_BUS),
        )
    return _enricher


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    lead = _service().handle(event)
    assert lead.enrichment is not None
    return {"lead_id": lead.lead_id, "enrichment": lead.enrichment.status}
