"""The signed link in the owner's weekly mail: one week's report as a read-only page.

ls-report signs it when it mails the report; ls-report-page (the one public surface that reads
the report) verifies it before it reads anything else. The token is ``link_tokens.issue_token``
with the action ``ls-report-page`` and the week as its subject, ``2026-11-23..2026-11-29``, so
a link opens exactly the week its mail counted and nothing else. It is not single use: opening
a page changes nothing, and the owner may open it twice. It expires ``reportLinkDays`` after
the mail (docs/what-people-see.md says why 28 by default).

A link is ``<ls-report-page URL>/report?t=<token>``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from handlers.common.link_tokens import Keyring, issue_token

ACTION = "ls-report-page"
PATH = "/report"
MAX_DAYS = 31
"""The longest period a link may name: the mail names seven days; more is not ours."""
_SEPARATOR = ".."


def subject(start: dt.date, end: dt.date) -> str:
    """The token subject naming the period ``start`` to ``end`` (inclusive)."""
    return f"{start.isoformat()}{_SEPARATOR}{end.isoformat()}"


def period(text: str) -> tuple[dt.date, dt.date]:
    """The period a (verified) token's subject names; ValueError when it names none."""
    first, sep, last = text.partition(_SEPARATOR)
    if not sep:
        raise ValueError("the subject names no period")
    start, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last)
    if not 0 <= (end - start).days < MAX_DAYS:
        raise ValueError("the subject names no period a mail sends")
    return start, end


def url(base: str, token: str) -> str:
    """The link a person opens."""
    return f"{base.rstrip('/')}{PATH}?t={token}"


@dataclass(frozen=True)
class PageLink:
    """A signed link and the last day (UTC) it works, which the mail and the page both say."""

    url: str
    last_day: dt.date


def last_day(expires_at: int) -> dt.date:
    """The last UTC day a token expiring at ``expires_at`` (unix seconds) still works."""
    return dt.datetime.fromtimestamp(expires_at - 1, dt.UTC).date()


def signer(base: str, keyring: Keyring, *, days: int, now: float) -> Callable[[dt.date, dt.date], PageLink]:
    """A function giving the link to a period's page, valid ``days`` from ``now``."""

    def link(start: dt.date, end: dt.date) -> PageLink:
        ttl = days * 86_400
        token = issue_token(
            keyring, subject=subject(start, end), action=ACTION, ttl_seconds=ttl, now=now
        )
        return PageLink(url(base, token), last_day(int(now) + ttl))

    return link
