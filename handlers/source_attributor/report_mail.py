"""The scheduled owner mail of ls-report: last week's attribution report, sent through SES.

The schedule invokes ls-report with ``{"job": "ls-report"}``; the week is the seven whole UTC
days before the run (the report's dates are UTC days), counted in strict mode, the document's
default. The mail is ``owner_report.mail``: both rules, the unattributed share ranked like any
source, the inline bars, a plain-text part, and a signed link to the same week's report as a
page (``report_link``; served by ls-report-page, since ls-report's own URL is AWS_IAM, for
programs).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from handlers.common import html_kit as kit
from handlers.source_attributor import owner_report
from handlers.source_attributor.attribution import Report
from handlers.source_attributor.report_link import PageLink
from handlers.source_attributor.reporting import generate, owner_query
from handlers.source_attributor.store import ReportStore

WEEK_DAYS = 7


def last_week(today: dt.date) -> tuple[dt.date, dt.date]:
    """The seven whole days before ``today`` (first and last, inclusive)."""
    end = today - dt.timedelta(days=1)
    return end - dt.timedelta(days=WEEK_DAYS - 1), end


@dataclass(frozen=True)
class Sent:
    start: dt.date
    end: dt.date
    enquiries: int
    message_id: str


def send_weekly(
    store: ReportStore,
    ses: Any,
    *,
    sender: str,
    recipient: str,
    today: dt.date,
    workers: int = 1,
    link: Callable[[dt.date, dt.date], PageLink] | None = None,
    keep: Callable[[Report], None] | None = None,
) -> Sent:
    """Compute last week's report and mail it to the owner (SES v2 SendEmail); ``link`` gives
    the signed link to the same week's page (``report_link.signer``), ``keep`` stores the
    report for that page before the mail names it (``stored_report``)."""
    start, end = last_week(today)
    report = generate(store, owner_query(start, end), workers=workers)
    if keep is not None:
        keep(report)
    composed = owner_report.mail(report, page=link(start, end) if link else None)
    answer = ses.send_email(
        FromEmailAddress=sender,
        Destination={"ToAddresses": [recipient]},
        Content={"Simple": kit.simple_content(composed)},
    )
    return Sent(start, end, report.enquiries, str(answer.get("MessageId", "")))
