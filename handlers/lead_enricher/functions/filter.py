"""ler-filter: le.deduped -> junk signals weighed -> le.clean or le.junk with the reason."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.degradations import model_client
from handlers.lead_enricher.contract import FILTER_FUNCTION, FilterSettings
from handlers.lead_enricher.enrich_cache import degradation_ledger
from handlers.lead_enricher.screening import JunkFilter


def wire(config: FilterSettings, clock: Clock) -> JunkFilter:
    """Each model call takes one of the day's ``dailyModelCalls`` first; a refused model is
    noted for the junk digest (``degradations.model_client``)."""
    ledger = degradation_ledger(config.cache_table)
    return JunkFilter(config, model_client=model_client(
        None, ledger, FILTER_FUNCTION, clock, config.daily_model_calls
    ))


def run(screen: JunkFilter, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, str]:
    lead = screen.handle(event)
    assert lead.screening is not None
    return {"lead_id": lead.lead_id, "decision": lead.screening.decision}


handler = entry.handler(__name__, FilterSettings, wire, run)
