"""ler-enrich: le.normalized -> firmographics for the lead's company domain -> le.enriched."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.lead_enricher.contract import EVENT_BUS, EnrichSettings
from handlers.lead_enricher.enrich_cache import EnrichCache, PendingMarkers
from handlers.lead_enricher.enriching import Enricher, make_provider
from handlers.lead_enricher.events import EventBridgeSink

if TYPE_CHECKING:
    from handlers.lead_enricher.providers.base import FirmographicProvider


def wire(
    config: EnrichSettings,
    clock: Clock,
    *,
    provider: FirmographicProvider | None = None,
    transport: Any = None,
) -> Enricher:
    """``provider`` replaces the configured one (tests); ``transport`` keeps it and replaces
    its HTTP call (the sandbox's stand-in)."""
    return Enricher(
        EnrichCache(config.cache_table, config.cache_ttl_days),
        PendingMarkers(config.cache_table),
        provider or make_provider(config, transport=transport),
        EventBridgeSink(config.event_source, EVENT_BUS),
        clock=clock,
    )


def run(enricher: Enricher, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, str]:
    lead = enricher.handle(event)
    assert lead.enrichment is not None
    return {"lead_id": lead.lead_id, "enrichment": lead.enrichment.status}


handler = entry.handler(__name__, EnrichSettings, wire, run)
