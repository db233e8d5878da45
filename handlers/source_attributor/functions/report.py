"""ls-report: the attribution report behind an AWS_IAM Function URL (logic in ``reporting``)."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.source_attributor import contract, reporting


def wire(config: contract.ReportSettings, clock: Clock) -> reporting.ReportApp:
    return reporting.app(config, clock)


def run(app: reporting.ReportApp, event: dict[str, Any], context: Any, clock: Clock) -> Any:
    """Function URL (AWS_IAM) entry point."""
    return app(event)


handler = entry.handler(__name__, contract.ReportSettings, wire, run)
