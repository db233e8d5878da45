"""ls-report-page's work: the weekly mail's signed link, answered with that week's report.

``GET /report?t=<token>`` and nothing else. The order is the point of this surface, which is
public (auth NONE): the method and path are checked, then the link token (``report_link``)
against the keyring, and only an authentic, unexpired token naming a period leads to a table.
A refused link reads no table and writes nothing anywhere; a browser gets a page saying what to
do, a program asking for JSON the JSON error (``html_kit.answer``). An accepted link's view is
counted, and past the period's view limit refused (429); otherwise the page is the report the
mail counted, stored (``stored_report``: one read a view), rendered by the mail's own renderer
(``owner_report.page``). Only a period stored nowhere is computed, by the mail's own query
(``reporting.owner_query``), once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from handlers.common import function_url as fu
from handlers.common import html_kit as kit
from handlers.common import link_tokens as lt
from handlers.common.clock import Clock, utc_now
from handlers.common.observability import get_logger
from handlers.common.secrets import get_secret
from handlers.source_attributor import owner_report, report_link
from handlers.source_attributor.attribution import Report
from handlers.source_attributor.contract import ReportPageSettings
from handlers.source_attributor.reporting import QUERY_WORKERS, generate, owner_query
from handlers.source_attributor.store import DynamoStore, ReportStore
from handlers.source_attributor.stored_report import DynamoReports, ReportPages


@dataclass
class WeekPage:
    """The page endpoint with its collaborators (stores, keyring, clock) swappable."""

    store: ReportStore
    keyring: Callable[[], lt.Keyring]
    """Reads the keyring when a request needs it (a refused method or path never does)."""
    reports: ReportPages
    view_limit: int
    clock: Clock = utc_now
    workers: int = 1

    def __call__(self, request: fu.Request) -> dict[str, Any]:
        if request.path != report_link.PATH:
            return kit.answer(request, 404, "not_found", "No such page",
                              "There is no page at this address. Open the report from its mail.")
        if request.method != "GET":
            return kit.answer(request, 405, "method_not_allowed", "This page is read-only",
                              "This page is read-only: open it with the link from the mail.")
        now = self.clock()
        try:
            claims = lt.verify_token(
                request.query.get("t"), self.keyring(), action=report_link.ACTION,
                now=now.timestamp(),
            )
            start, end = report_link.period(claims.subject)
        except lt.TokenExpired:
            return kit.answer(request, 410, "link_expired", "This link has expired",
                              "This link to the report has expired. The latest weekly mail "
                              "has a link that works.")
        except (lt.TokenError, ValueError):
            return kit.answer(request, 403, "invalid_link", "This link is not valid",
                              "This link to the lead sources report is not valid: it may have "
                              "been cut or changed. Open it again from the weekly mail.")
        period = report_link.subject(start, end)
        if not self.reports.count_view(period, self.view_limit, claims.expires_at):
            return kit.answer(request, 429, "view_limit", "This link has been opened too often",
                              f"This link to the report has been opened {self.view_limit} "
                              "times, its limit. The next weekly mail brings a new link.")
        report = self._report(period, start, end, claims.expires_at)
        get_logger().info("report page", extra={"enquiries": report.enquiries, "kid": claims.kid})
        return owner_report.page(report, link_until=report_link.last_day(claims.expires_at))

    def _report(self, period: str, start: dt.date, end: dt.date, expires_at: int) -> Report:
        """The stored report; a period stored nowhere is computed and stored, once."""
        report = self.reports.stored(period)
        if report is None:
            report = generate(self.store, owner_query(start, end), workers=self.workers)
            self.reports.store(period, report, expires_at, replace=False)
        return report


def app(settings: ReportPageSettings, clock: Clock) -> WeekPage:
    """The page of the function's settings."""
    return WeekPage(
        store=DynamoStore(
            touches_table=settings.touches_table,
            identities_table=settings.identities_table,
            enquiries_table=settings.enquiries_table,
        ),
        keyring=lambda: lt.Keyring.from_secret_string(get_secret(settings.report_link_key_secret)),
        reports=DynamoReports(settings.reports_table),
        view_limit=settings.report_link_views,
        clock=clock,
        workers=QUERY_WORKERS,
    )
