"""ler-enrich: le.normalized -> firmographics for the lead's company domain -> le.enriched."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.spend import SpendGuard
from handlers.lead_enricher.contract import EVENT_BUS, EnrichSettings
from handlers.lead_enricher.enrich_cache import EnrichCache, PendingMarkers, degradation_ledger
from handlers.lead_enricher.enriching import Enricher, make_provider
from handlers.lead_enricher.events import EventBridgeSink
from handlers.lead_enricher.providers.capped import CappedProvider

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
    its HTTP call (the sandbox's stand-in). Either way each lookup takes one of the day's
    ``dailyEnrichmentLookups`` first (``CappedProvider``)."""
    ledger = degradation_ledger(config.cache_table)
    guard = SpendGuard.beside(ledger, {"lookup": config.daily_enrichment_lookups}, clock)
    return Enricher(
        EnrichCache(config.cache_table, config.cache_ttl_days),
        PendingMarkers(config.cache_table),
        CappedProvider(provider or make_provider(config, clock, transport=transport), guard),
        EventBridgeSink(config.event_source, EVENT_BUS),
        clock=clock,
    )


def run(enricher: Enricher, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, str]:
    lead = enricher.handle(event)
    assert lead.enrichment is not None
    return {"lead_id": lead.lead_id, "enrichment": lead.enrichment.status}


handler = entry.handler(__name__, EnrichSettings, wire, run)
