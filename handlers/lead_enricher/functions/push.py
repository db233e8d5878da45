"""ler-push: le.clean -> create or link the CRM contact -> ler-records and ler-identity.

ler-backfill also invokes it directly, page by page (``{"action": "resync_page", "after":
...}``), to re-sync ler-identity from the CRM's contact export.
"""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.lead_enricher.contract import CLEAN, RESYNC_ACTION, PushSettings
from handlers.lead_enricher.crm import Crm
from handlers.lead_enricher.events import lead_from_event
from handlers.lead_enricher.pushing import Pusher, make_crm


def wire(config: PushSettings, clock: Clock, *, crm: Crm | None = None) -> Pusher:
    """``crm``: HubSpot unless tests or the sandbox give another."""
    return Pusher(config, crm or make_crm(config, clock), clock=clock)


def run(pusher: Pusher, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, Any]:
    """le.clean from EventBridge, or ``{"action": "resync_page", "after": ...}`` from ler-backfill."""
    if event.get("action") == RESYNC_ACTION:
        after = event.get("after")
        return pusher.resync_page(None if after is None else str(after), int(event.get("limit", 100)))
    result = pusher.push(lead_from_event(event, CLEAN))
    return {"lead_id": result.lead_id, "crm_id": result.crm_id, "action": result.action}


handler = entry.handler(__name__, PushSettings, wire, run)
