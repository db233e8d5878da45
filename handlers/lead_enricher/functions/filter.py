"""ler-filter: le.deduped -> junk signals weighed -> le.clean or le.junk with the reason."""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.lead_enricher.contract import FilterSettings
from handlers.lead_enricher.screening import JunkFilter

_filter: JunkFilter | None = None


def _service() -> JunkFilter:
    global _filter
    if _filter is None:
        _filter = JunkFilter(settings.current(FilterSettings))
    return _filter


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    lead = _service().handle(event)
    assert lead.screening is not None
    return {"lead_id": lead.lead_id, "decision": lead.screening.decision}
