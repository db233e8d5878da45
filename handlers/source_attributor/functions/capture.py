"""ls-capture: the public beacon Function URL (logic in ``capturing``)."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.function_url import Request
from handlers.source_attributor import beacon, capturing, contract


def wire(config: contract.CaptureSettings, clock: Clock) -> capturing.CaptureApp:
    return capturing.app(config, clock)


def run(app: capturing.CaptureApp, request: Request, context: Any, clock: Clock) -> Any:
    """Function URL entry point."""
    return app(request)


handler = entry.handler(
    __name__, contract.CaptureSettings, wire, run, url=True, max_body=beacon.MAX_BODY_BYTES
)
