"""The one look of every page and mail a person reads: owner, reviewer, customer.

Mobile first (one column, nothing wider than a 390 px phone), language set, text and buttons
at WCAG AA contrast or better, a difference marked by a word and a symbol as well as a colour,
links that say what they do, and a plain-text part beside every HTML mail. Styles are inline
on the elements that carry meaning (mail clients drop or rewrite ``<style>`` blocks), with a
small ``<style>`` for what only it can say (word breaking, the phone breakpoint).

A browser following a link gets a page for every outcome, an API client that asks for JSON
gets the JSON error: ``answer`` decides by the Accept header.

Every value put into HTML goes through ``esc``; the builders take escaped HTML fragments
(``Html``, a str subclass only they make) or plain strings, which they escape.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

from handlers.common.function_url import Request, json_error


class Html(str):
    """An HTML fragment whose text has been escaped (only this module's builders make one)."""

    __slots__ = ()

LANG = "en"
INK = "#1b1f24"  # 16.1:1 on white
MUTED = "#57606a"  # 6.4:1 on white: for secondary lines only, never for a value
LINK = "#0a58ca"  # 6.1:1 on white; links are underlined as well
PAPER = "#ffffff"
RULE = "#d0d7de"
MARK_BG = "#fff1a8"  # behind a changed value; the value also carries a "differs" tag
ALERT = "#8a1c1c"  # 8.5:1 on white

FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif"
_STYLE = (
    f"body{{margin:0;padding:0;background:{PAPER};color:{INK};{FONT};font-size:16px;"
    "line-height:1.45;-webkit-text-size-adjust:100%}"
    "main{max-width:40rem;margin:0 auto;padding:12px 16px 32px}"
    "h1{font-size:1.35rem;line-height:1.25;margin:.4rem 0 .6rem}"
    "h2{font-size:1.1rem;margin:1.4rem 0 .4rem}"
    "table{border-collapse:collapse;width:100%;table-layout:fixed}"
    f"td,th{{padding:6px 6px;border-bottom:1px solid {RULE};text-align:left;vertical-align:top;"
    "overflow-wrap:anywhere;word-break:break-word}"
    "th{font-weight:600}"
    f"a{{color:{LINK}}}"
    "form{display:inline-block;margin:0 8px 8px 0}"
    "button{font:inherit;font-weight:600;cursor:pointer}"
    f".detail{{color:{MUTED};font-size:.875rem}}"
    "ul,ol{padding-left:1.2rem}li{margin:.35rem 0}"
)
_HEADERS = {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    # Forms post to the same Function URL; nothing is loaded from anywhere.
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
}


def esc(value: object) -> Html:
    """``value`` as text inside HTML (quotes escaped too, so it is safe in attributes)."""
    return Html(escape(str(value), quote=True))


def join(parts: Iterable[str]) -> Html:
    return Html("".join(parts))


def document(title: str, body: Html, *, lang: str = LANG) -> Html:
    """A whole HTML document: the same shell for a page and for the HTML part of a mail."""
    return Html(
        f"<!doctype html><html lang={esc(lang)}><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width,initial-scale=1'>"
        "<meta name=robots content=noindex>"
        f"<title>{esc(title)}</title><style>{_STYLE}</style></head>"
        f"<body style='margin:0;background:{PAPER};color:{INK}'>"
        f"<main style='max-width:40rem;margin:0 auto;padding:12px 16px 32px;{FONT}'>"
        f"{body}</main></body></html>"
    )


def page(title: str, body: Html, *, status: int = 200) -> dict[str, Any]:
    """A Function URL response carrying a page."""
    return {
        "statusCode": status,
        "headers": dict(_HEADERS),
        "body": document(title, Html(f"<h1>{esc(title)}</h1>{body}")),
        "isBase64Encoded": False,
    }


def para(text: str | Html, *, strong: bool = False) -> Html:
    inner = text if _is_html(text) else esc(text)
    return Html(f"<p><strong>{inner}</strong></p>" if strong else f"<p>{inner}</p>")


def heading(text: str) -> Html:
    """A section heading inside a page or mail (the title is its ``h1``)."""
    return Html(f"<h2>{esc(text)}</h2>")


def quote(lines: Sequence[str]) -> Html:
    """Someone's own words (feedback, a message as sent), set apart and kept line by line."""
    inner = "<br>".join(esc(line) for line in lines)
    return Html(
        f"<blockquote style='margin:4px 0 12px;padding:4px 0 4px 12px;border-left:4px solid {RULE}'>"
        f"{inner}</blockquote>"
    )


def fields(rows: Sequence[tuple[str, str]]) -> Html:
    """Label and value, one row each: a record as a person reads it (labels in words)."""
    body = "".join(
        f"<tr><th scope=row style='width:38%;overflow-wrap:normal;word-break:normal'>{esc(label)}</th><td>{esc(value)}</td></tr>"
        for label, value in rows
    )
    return Html(f"<table>{body}</table>")


def detail(text: str | Html) -> Html:
    """A secondary line (units, ids, scores): never the only place a fact is said."""
    inner = text if _is_html(text) else esc(text)
    return Html(f"<p class=detail style='color:{MUTED};font-size:14px'>{inner}</p>")


def _is_html(text: str | Html) -> bool:
    return isinstance(text, Html)


def button(url: str, label: str, *, primary: bool = False, method: str = "post") -> Html:
    """An action: a POST form for what changes state (a mail scanner fetching links changes
    nothing), a link styled as a button for what only opens a page. The label says what it
    does ("Merge these two", not "Click here"); the primary one is marked for the checks."""
    style = (
        f"background:{LINK};color:#fff;border:2px solid {LINK}"
        if primary
        else f"background:{PAPER};color:{INK};border:2px solid {INK}"
    )
    style += ";border-radius:6px;padding:10px 16px;font-size:16px;font-weight:600;line-height:1.2"
    marker = " data-primary" if primary else ""
    if method == "get":
        return Html(
            f"<a href='{esc(url)}'{marker} style='display:inline-block;text-decoration:none;"
            f"margin:0 8px 8px 0;{style}'>{esc(label)}</a>"
        )
    return Html(
        f"<form method=post action='{esc(url)}'>"
        f"<button type=submit{marker} style='{style}'>{esc(label)}</button></form>"
    )


def actions(*buttons: Html) -> Html:
    return Html(f"<div style='margin:12px 0 4px'>{''.join(buttons)}</div>")


def link(url: str, label: str) -> Html:
    """A text link whose words say where it goes."""
    return Html(f"<a href='{esc(url)}' style='color:{LINK};text-decoration:underline'>{esc(label)}</a>")


def way_back(business: str, url: str) -> Html:
    """The foot of every page a customer lands on: who sent the link and the way back to them,
    so a dead link is never a dead end."""
    return Html(
        para(f"This link came from {business}.")
        + actions(button(url, f"Go to {business}", primary=True, method="get"))
    )


def differs(value: str) -> Html:
    """A value that differs from its counterpart: highlighted, bold, and tagged in words."""
    return Html(
        f"<mark style='background:{MARK_BG};color:{INK};font-weight:700'>{esc(value)}</mark>"
        f" <small style='color:{ALERT};white-space:nowrap'>&#8800; differs</small>"
    )


_LABEL = "width:27%;overflow-wrap:normal;word-break:normal"  # a label wraps between words only


def side_by_side(
    labels: Mapping[str, str],
    left: Mapping[str, object],
    right: Mapping[str, object],
    *,
    heads: tuple[str, str],
    unmarked: frozenset[str] = frozenset(),
) -> Html:
    """Two records field by field, each differing value marked (``differs``). Field keys are
    shown through ``labels`` (a field without a label is not shown); ``unmarked`` fields
    (ids, which always differ) are never marked."""
    rows = []
    for key, label in labels.items():
        a, b = left.get(key), right.get(key)
        if a in (None, "") and b in (None, ""):
            continue
        sa, sb = ("" if a is None else str(a)), ("" if b is None else str(b))
        same = key in unmarked or sa.casefold() == sb.casefold()
        cell_a = esc(sa or "(empty)") if same or not sa else differs(sa)
        cell_b = esc(sb or "(empty)") if same or not sb else differs(sb)
        rows.append(f"<tr><th scope=row style='{_LABEL}'>{esc(label)}</th><td>{cell_a}</td><td>{cell_b}</td></tr>")
    head = (
        f"<tr><th scope=col style='{_LABEL}'><span class=detail>Field</span></th>"
        f"<th scope=col>{esc(heads[0])}</th><th scope=col>{esc(heads[1])}</th></tr>"
    )
    return Html(f"<table>{head}{''.join(rows)}</table>")


def rows_table(head: Sequence[str], rows: Iterable[Sequence[str | Html]], *, numeric: int = 0) -> Html:
    """A simple table; the last ``numeric`` columns are right-aligned figures."""
    n = len(head)

    def cell(tag: str, i: int, value: str | Html) -> str:
        figure = i >= n - numeric
        style = "text-align:right;width:28%" if figure else "text-align:left"
        inner = value if _is_html(value) else esc(value)
        return f"<{tag} style='{style}'>{inner}</{tag}>"

    top = "".join(cell("th", i, h) for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>" for r in rows)
    return Html(f"<table><tr>{top}</tr>{body}</table>")


def bars(items: Sequence[tuple[str, float, str]], *, highlight: str | None = None) -> Html:
    """A bar chart in HTML and CSS (mail clients show no scripts and block remote images):
    (label, share 0..1, figure text) per bar, the figure always written beside it."""
    out = []
    for label, share, figure in items:
        width = max(0.0, min(1.0, share)) * 100
        strong = label == highlight
        colour = ALERT if strong else LINK
        name = f"<strong>{esc(label)}</strong>" if strong else esc(label)
        out.append(
            f"<tr><td style='width:38%;border:0;padding:3px 6px 3px 0'>{name}</td>"
            f"<td style='border:0;padding:3px 0'><div style='background:{colour};height:14px;"
            f"width:{width:.1f}%;min-width:2px'></div></td>"
            f"<td style='width:22%;border:0;padding:3px 0 3px 6px;text-align:right'>{esc(figure)}</td></tr>"
        )
    return Html(f"<table role=presentation>{''.join(out)}</table>")


@dataclass(frozen=True)
class Mail:
    """One mail: subject, the plain-text part (always) and the HTML part."""

    subject: str
    text: str
    html: str

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise ValueError("every mail has a plain-text part")


def mail(subject: str, text_lines: Sequence[str], body: Html) -> Mail:
    """A mail whose HTML part is ``body`` in the shared shell, under a heading of ``subject``."""
    return Mail(subject, "\n".join(text_lines).rstrip() + "\n", document(subject, Html(f"<h1>{esc(subject)}</h1>{body}")))


def simple_content(m: Mail) -> dict[str, Any]:
    """SES v2 ``Content.Simple`` for a mail: subject, text and HTML parts."""
    return {
        "Subject": {"Data": m.subject, "Charset": "UTF-8"},
        "Body": {
            "Text": {"Data": m.text, "Charset": "UTF-8"},
            "Html": {"Data": m.html, "Charset": "UTF-8"},
        },
    }


# Times --------------------------------------------------------------------------------------


def local_time(moment: dt.datetime | int | float, zone: str) -> str:
    """A moment as the business reads it: "Tue 1 Dec 2026, 14:05 GMT" in ``zone``."""
    when = (
        dt.datetime.fromtimestamp(moment, dt.UTC)
        if isinstance(moment, int | float)
        else (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC))
    )
    local = when.astimezone(ZoneInfo(zone))
    return f"{local:%a} {local.day} {local:%b %Y}, {local:%H:%M} {local.tzname()}"


def local_day(day: dt.date) -> str:
    """A date as people write it: "Tue 1 Dec 2026"."""
    return f"{day:%a} {day.day} {day:%b %Y}"


# Browser or program -------------------------------------------------------------------------


def _accepts(accept: str) -> dict[str, float]:
    """Media ranges of an Accept header with their q values (RFC 9110, section 12.5.1)."""
    ranges: dict[str, float] = {}
    for part in accept.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        if not media:
            continue
        q = 1.0
        for p in params:
            name, _, value = p.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        ranges[media.lower()] = max(q, ranges.get(media.lower(), 0.0))
    return ranges


def wants_html(request: Request) -> bool:
    """Whether the caller is a browser: it names text/html and ranks it at least as high as
    JSON. ``*/*`` alone (curl, SDKs) or ``application/json`` keeps the JSON answer."""
    ranges = _accepts(request.headers.get("accept") or "")
    html = ranges.get("text/html", 0.0)
    return html > 0 and html >= ranges.get("application/json", 0.0)


def answer(
    request: Request,
    status: int,
    code: str,
    title: str,
    message: str,
    *,
    more: Html | None = None,
) -> dict[str, Any]:
    """An outcome that is not the happy path: a page for a browser, the JSON error otherwise.
    ``message`` is the same plain sentence in both."""

    if not wants_html(request):
        return json_error(status, code, message)
    return page(title, Html(para(message) + (more or "")), status=status)
