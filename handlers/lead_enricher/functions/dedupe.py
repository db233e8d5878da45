"""ler-dedupe: le.enriched -> new or link:<crm_id> against ler-identity -> le.deduped."""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.lead_enricher.contract import DedupeSettings
from handlers.lead_enricher.deduping import Deduper

_deduper: Deduper | None = None


def _service() -> Deduper:
    global _deduper
    if _deduper is None:
        _deduper = Deduper(settings.current(DedupeSettings))
    return _deduper


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    lead = _service().handle(event)
    assert lead.dedupe is not None
    return {"lead_id": lead.lead_id, "verdict": lead.dedupe.verdict}
