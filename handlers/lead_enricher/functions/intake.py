"""ler-intake: the Function URL, the S3 lanes (mail, uploads) and an upload's continuation."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.function_url import Request
from handlers.lead_enricher.contract import UPLOAD_CONTINUE, IntakeSettings
from handlers.lead_enricher.lanes import MAX_BODY_BYTES, Intake


def wire(config: IntakeSettings, clock: Clock) -> Intake:
    return Intake(config, clock=lambda: clock().timestamp())


def run(service: Intake, event: Request | dict[str, Any], context: Any, clock: Clock) -> Any:
    """Function URL request, S3 notification (also re-driven by ler-retry), or intake's own
    continuation of a long upload."""
    service.remaining_ms = context.get_remaining_time_in_millis
    # A long upload goes on in a new invocation of this very function (named by Lambda).
    service.function_name = context.function_name
    if isinstance(event, Request):
        return service.form(event)
    if isinstance(event.get(UPLOAD_CONTINUE), dict):
        return service.resume(event)
    if isinstance(event.get("Records"), list):
        return service.objects(event)
    raise ValueError("ler-intake runs for its Function URL, S3 lanes or an upload's continuation only")


handler = entry.handler(
    __name__, IntakeSettings, wire, run, url="beside_other_triggers", max_body=MAX_BODY_BYTES
)
