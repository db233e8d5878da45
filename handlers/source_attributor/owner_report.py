"""The attribution report as the owner reads it: a mail, or the same as a page.

Per rule (first touch; last touch that was not a direct visit), every source with its count,
share and an inline bar, and the unattributed enquiries as a row of their own, ranked by their
count like any source and written in bold and in words, never left to a footnote: the point
of the report is how much of it is known. The bars are HTML and CSS (mail clients show no
scripts and block remote images by default), each with its figure written beside it.

Only rendering lives here; the numbers are ``attribution.Report``'s.
"""

from __future__ import annotations

import datetime as dt

from handlers.common import html_kit as kit
from handlers.source_attributor.attribution import Report, RuleResult
from handlers.source_attributor.report_link import PageLink

UNKNOWN = "Not known (unattributed)"
RULE_TITLES = {
    "first_touch": "Where enquiries first came from",
    "last_non_direct": "The last source before they enquired (direct visits skipped)",
}
MODES = {
    "strict": "only sources we saw (tags, referrers); direct visits and guesses left out",
    "lenient": "every touch counts, direct visits and what people told us included",
}


def _rows(report: Report, result: RuleResult) -> list[tuple[str, int]]:
    rows = [*result.sources.items(), (UNKNOWN, result.unattributed)]
    return sorted(rows, key=lambda row: (-row[1], row[0] != UNKNOWN, row[0]))


def _figure(report: Report, count: int) -> str:
    return f"{count} ({report.share(count):.0%})"


def _headline(report: Report) -> str:
    unknown = max((r.unattributed for r in report.rules.values()), default=0)
    period = f"{kit.local_day(report.start)} to {kit.local_day(report.end)}"
    if not report.enquiries:
        return f"No enquiries from {period}."
    return (
        f"{report.enquiries} enquiries from {period}. For {unknown} of them "
        f"({report.share(unknown):.0%}) we cannot tell where they came from."
    )


def body(report: Report, *, page: PageLink | None = None) -> tuple[kit.Html, list[str]]:
    """The HTML body and the plain-text lines of the report; ``page``: the signed link to the
    same report as a page (the mail's)."""
    head = _headline(report)
    html = [kit.para(head, strong=True)]
    text = [head, ""]
    if page is not None:
        until = f"The link works until {kit.local_day(page.last_day)}."
        html.append(kit.actions(kit.button(page.url, "Open this report as a page", primary=True, method="get")))
        html.append(kit.detail(until))
        text += [f"Open this report as a page: {page.url}", until, ""]
    for name, result in report.rules.items():
        title = RULE_TITLES.get(name, name.replace("_", " "))
        rows = _rows(report, result)
        top = max((n for _, n in rows), default=0) or 1
        html.append(kit.Html(f"<h2>{kit.esc(title)}</h2>"))
        html.append(kit.bars([(label, n / top, _figure(report, n)) for label, n in rows], highlight=UNKNOWN))
        text.append(title)
        text += [f"  {label}: {_figure(report, n)}" for label, n in rows]
        text.append("")
    how = MODES.get(report.mode, report.mode)
    html.append(kit.detail(f"Counted in {report.mode} mode: {how}."))
    text.append(f"Detail: counted in {report.mode} mode: {how}.")
    return kit.join(html), text


def mail(report: Report, *, page: PageLink | None = None) -> kit.Mail:
    """The scheduled mail: subject, plain text and HTML."""
    unknown = max((r.unattributed for r in report.rules.values()), default=0)
    subject = (
        f"Lead sources {kit.local_day(report.start)} to {kit.local_day(report.end)}: "
        f"{report.enquiries} enquiries, {report.share(unknown):.0%} not known"
    )
    html, text = body(report, page=page)
    return kit.mail(subject, [subject, "", *text], html)


def page(report: Report, *, link_until: dt.date | None = None) -> dict[str, object]:
    """The same report as a read-only page; ``link_until``: the last day its link works."""
    html, _ = body(report)
    if link_until is not None:
        html = kit.join((html, kit.detail(
            f"This page is read-only. The link from the mail works until {kit.local_day(link_until)}; "
            "each week's mail brings a new one.")))
    return kit.page(
        f"Lead sources {kit.local_day(report.start)} to {kit.local_day(report.end)}", html
    )
