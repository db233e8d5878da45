"""ls-report-page: the weekly mail's signed link to the report page (public Function URL;
logic in ``week_page``)."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.function_url import Request
from handlers.source_attributor import contract, week_page


def wire(config: contract.ReportPageSettings, clock: Clock) -> week_page.WeekPage:
    return week_page.app(config, clock)


def run(page: week_page.WeekPage, request: Request, context: Any, clock: Clock) -> Any:
    """Function URL requests only."""
    return page(request)


handler = entry.handler(__name__, contract.ReportPageSettings, wire, run, url=True)
