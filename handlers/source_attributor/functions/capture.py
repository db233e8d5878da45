"""ls-capture: the public beacon Function URL (logic in ``capturing``)."""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.source_attributor import capturing, contract

_app: capturing.CaptureApp | None = None


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Function URL entry point."""
    global _app
    if _app is None:
        _app = capturing.app(settings.current(contract.CaptureSettings))
    return _app(event)
