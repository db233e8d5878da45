"""ler-filter: le.deduped -> junk signals weighed -> le.clean or le.junk with the reason."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.degradations import NotingRefusals
from handlers.lead_enricher.contract import FILTER_FUNCTION, FilterSettings
from handlers.lead_enricher.enrich_cache import degradation_ledger
from handlers.lead_enricher.screening import JunkFilter


def wire(config: FilterSettings, clock: Clock) -> JunkFilter:
    """A refused model is noted for the junk digest (``NotingRefusals``)."""
    ledger = degradation_ledger(config.cache_table)
    return JunkFilter(config, model_client=NotingRefusals(None, ledger, FILTER_FUNCTION, clock))


def run(screen: JunkFilter, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, str]:
    lead = screen.handle(event)
    assert lead.screening is not None
    return {"lead_id": lead.lead_id, "decision": lead.screening.decision}


handler = entry.handler(__name__, FilterSettings, wire, run)
