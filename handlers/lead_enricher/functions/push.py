"""ler-push: le.clean -> create or link the CRM contact -> ler-records and ler-identity.

ler-backfill also invokes it directly, page by page (``{"action": "resync_page", "after":
...}``), to re-sync ler-identity from the CRM's contact export.
"""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.lead_enricher.contract import CLEAN, RESYNC_ACTION, PushSettings
from handlers.lead_enricher.events import lead_from_event
from handlers.lead_enricher.pushing import Pusher, make_crm

_pusher: Pusher | None = None


def _service() -> Pusher:
    global _pusher
    if _pusher is None:
        config = settings.current(PushSettings)
        _pusher = Pusher(config, make_crm(config))
    return _pusher


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """le.clean from EventBridge, or ``{"action": "resync_page", "after": ...}`` from ler-backfill."""
    if event.get("action") == RESYNC_ACTION:
        after = event.get("after")
        return _service().resync_page(
            None if after is None else str(after), int(event.get("limit", 100))
        )
    result = _service().push(lead_from_event(event, CLEAN))
    return {"lead_id": result.lead_id, "crm_id": result.crm_id, "action": result.action}
