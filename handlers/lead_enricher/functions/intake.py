"""ler-intake: the Function URL, the S3 lanes (mail, uploads) and an upload's continuation."""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.lead_enricher.contract import UPLOAD_CONTINUE, IntakeSettings
from handlers.lead_enricher.lanes import Intake

_intake: Intake | None = None


def _service() -> Intake:
    global _intake
    if _intake is None:
        _intake = Intake(settings.current(IntakeSettings))
    return _intake


@logged
def handler(event: dict[str, Any], context: Any) -> Any:
    """Function URL request, S3 notification (also re-driven by ler-retry), or intake's own
    continuation of a long upload."""
    service = _service()
    service.remaining_ms = context.get_remaining_time_in_millis
    # A long upload goes on in a new invocation of this very function (named by Lambda).
    service.function_name = context.function_name
    if isinstance(event.get(UPLOAD_CONTINUE), dict):
        return service.resume(event)
    if isinstance(event.get("Records"), list):
        return service.objects(event)
    return service.form(event)
