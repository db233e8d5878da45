"""ler-dedupe: le.enriched -> new or link:<crm_id> against ler-identity -> le.deduped."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.degradations import model_client
from handlers.lead_enricher.contract import DEDUPE_FUNCTION, DedupeSettings
from handlers.lead_enricher.deduping import Deduper
from handlers.lead_enricher.enrich_cache import degradation_ledger


def wire(config: DedupeSettings, clock: Clock) -> Deduper:
    """Each model call takes one of the day's ``dailyModelCalls`` first; a refused model is
    noted for the junk digest (``degradations.model_client``)."""
    ledger = degradation_ledger(config.cache_table)
    return Deduper(config, model_client=model_client(
        None, ledger, DEDUPE_FUNCTION, clock, config.daily_model_calls
    ))


def run(deduper: Deduper, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, str]:
    lead = deduper.handle(event)
    assert lead.dedupe is not None
    return {"lead_id": lead.lead_id, "verdict": lead.dedupe.verdict}


handler = entry.handler(__name__, DedupeSettings, wire, run)
