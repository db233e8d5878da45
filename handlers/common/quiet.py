"""Quiet when there is nothing to say: the owner's daily mail is not sent on a day with nothing
to act on or read. With ``quietReport: line`` (the default) one line says all is quiet once a
week, on ``ALL_QUIET_WEEKDAY``, so the owner knows the system runs; with ``none``, nothing.
"""

from __future__ import annotations

import datetime as dt

from handlers.common import html_kit as kit

LINE = "line"
NONE = "none"
ALL_QUIET_WEEKDAY = 0
"""Monday (``date.weekday()``): the week's one "all quiet" line."""


def all_quiet_due(today: dt.date, quiet: str) -> bool:
    """Whether a day with nothing to say still gets the week's "all quiet" line."""
    return quiet == LINE and today.weekday() == ALL_QUIET_WEEKDAY


def all_quiet(system: str, what: str) -> kit.Mail:
    """The one line: ``what`` was quiet, and why no other mail comes on such a day."""
    subject = f"{system}: all quiet"
    why = ("On a day with nothing to act on or read no mail comes; this line comes on Mondays, "
           f"so you know the {system.lower()} is running.")
    return kit.mail(subject, [subject, "", what, "", why], kit.join([kit.para(what, strong=True), kit.detail(why)]))
