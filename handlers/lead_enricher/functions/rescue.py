"""ler-rescue: the junk digest's rescue links (public Function URL, signed single-use tokens).

GET names the dropped lead and asks; POST sends it back through the chain as not junk
(``handlers.lead_enricher.rescue``).
"""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.function_url import Request
from handlers.common.link_tokens import Keyring
from handlers.common.secrets import get_secret
from handlers.lead_enricher.contract import RescueSettings
from handlers.lead_enricher.intake_queue import LeadQueue
from handlers.lead_enricher.rescue import RescueDesk
from handlers.lead_enricher.storage import ObjectStore


def wire(config: RescueSettings, clock: Clock) -> RescueDesk:
    return RescueDesk(
        config,
        ObjectStore(),
        LeadQueue(config.intake_queue_url),
        # Read per request through the secrets cache (300 s), so a rotated keyring is seen.
        lambda: Keyring.from_secret_string(get_secret(config.rescue_key_secret_id)),
        clock,
    )


def run(desk: RescueDesk, request: Request, context: Any, clock: Clock) -> dict[str, Any]:
    return desk.web(request)


handler = entry.handler(__name__, RescueSettings, wire, run, url=True)
