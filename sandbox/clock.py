"""The sandbox's clock: real time plus an offset that a scenario moves forward.

Moving the clock does what the passing time would have done, in order: one-off ``at()``
schedules fire at their time, and each recurring schedule (``rate()``, ``cron()``) whose next
occurrence falls inside the skipped interval fires once, at its last occurrence there (a compressed day
does not replay 96 quarter-hours); after each firing the pump delivers what it caused. Every
handler reads this clock: the sandbox makes it the one clock of ``handlers.common.entry``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

UTC = dt.UTC


@dataclass
class Clock:
    """Real time shifted by ``offset``."""

    offset: dt.timedelta = field(default_factory=dt.timedelta)

    def now(self) -> dt.datetime:
        return dt.datetime.now(UTC) + self.offset

    def jump_to(self, moment: dt.datetime) -> None:
        """Set the time (forward only), firing nothing: a scenario setting its scene."""
        if moment > self.now():
            self.offset += moment - self.now()

    def advance(self, delta: dt.timedelta) -> tuple[dt.datetime, dt.datetime]:
        """Move forward; return the (start, end) of the skipped interval."""
        start = self.now()
        self.offset += delta
        return start, start + delta


_RATE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
_AT = re.compile(r"^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$")
_CRON = re.compile(r"^cron\((.+)\)$")


def at_time(expression: str, timezone: str = "UTC") -> dt.datetime | None:
    """The moment of an ``at(yyyy-mm-ddThh:mm:ss)`` expression in ``timezone``, as UTC."""
    match = _AT.match(expression.strip())
    if not match:
        return None
    local = dt.datetime.fromisoformat(match.group(1)).replace(tzinfo=ZoneInfo(timezone or "UTC"))
    return local.astimezone(UTC)


def rate_seconds(expression: str) -> int | None:
    match = _RATE.match(expression.strip())
    if not match:
        return None
    unit = match.group(2).rstrip("s")
    return int(match.group(1)) * {"minute": 60, "hour": 3600, "day": 86400}[unit]


def _field(spec: str, value: int, low: int, high: int, names: dict[str, int] | None = None) -> bool:
    if spec in ("*", "?"):
        return True
    for part in spec.split(","):
        step = 1
        if "/" in part:
            part, step_text = part.split("/", 1)
            step = int(step_text)
        if part in ("*", ""):
            start, end = low, high
        elif "-" in part:
            a, b = part.split("-", 1)
            start, end = _num(a, names), _num(b, names)
        else:
            start = _num(part, names)
            end = high if step > 1 else start
        if start <= value <= end and (value - start) % step == 0:
            return True
    return False


def _num(text: str, names: dict[str, int] | None) -> int:
    if names and text.upper() in names:
        return names[text.upper()]
    return int(text)


_MONTHS = {
    m: i
    for i, m in enumerate(
        ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], 1
    )
}
_DAYS = {d: i for i, d in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"], 1)}


def cron_matches(expression: str, moment: dt.datetime, timezone: str = "UTC") -> bool:
    """Whether an EventBridge ``cron(min hour dom month dow year)`` fires at ``moment``'s
    minute (``L``, ``W`` and ``#`` are not supported and never match)."""
    match = _CRON.match(expression.strip())
    if not match:
        return False
    fields = match.group(1).split()
    if len(fields) != 6 or any(c in match.group(1) for c in "LW#"):
        return False
    local = moment.astimezone(ZoneInfo(timezone or "UTC"))
    minute, hour, dom, month, dow, year = fields
    aws_dow = local.isoweekday() % 7 + 1  # SUN=1 .. SAT=7
    return (
        _field(minute, local.minute, 0, 59)
        and _field(hour, local.hour, 0, 23)
        and _field(dom, local.day, 1, 31)
        and _field(month, local.month, 1, 12, _MONTHS)
        and _field(dow, aws_dow, 1, 7, _DAYS)
        and _field(year, local.year, 1970, 2199)
    )


def last_occurrence(
    expression: str, timezone: str, start: dt.datetime, end: dt.datetime, origin: dt.datetime
) -> dt.datetime | None:
    """The last occurrence of a recurring schedule in ``(start, end]``, if any: a polling job
    run then sees everything that became due in the interval."""
    seconds = rate_seconds(expression)
    if seconds is not None:
        moment = origin + dt.timedelta(
            seconds=int((end - origin).total_seconds()) // seconds * seconds
        )
        return moment if moment > start else None
    if _CRON.match(expression.strip()):
        moment = end.replace(second=0, microsecond=0)
        limit = max(start, end - dt.timedelta(days=8))
        while moment > limit:
            if cron_matches(expression, moment, timezone):
                return moment
            moment -= dt.timedelta(minutes=1)
    return None


def occurs_between(
    expression: str, timezone: str, start: dt.datetime, end: dt.datetime, origin: dt.datetime
) -> bool:
    """Whether a recurring schedule has an occurrence in ``(start, end]``.

    ``rate()`` counts from ``origin`` (when the sandbox created the schedule); ``cron()`` is
    checked minute by minute over at most 8 days.
    """
    seconds = rate_seconds(expression)
    if seconds is not None:
        before = int((start - origin).total_seconds()) // seconds
        after = int((end - origin).total_seconds()) // seconds
        return after > before
    if _CRON.match(expression.strip()):
        moment = start.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
        limit = min(end, start + dt.timedelta(days=8))
        while moment <= limit:
            if cron_matches(expression, moment, timezone):
                return True
            moment += dt.timedelta(minutes=1)
    return False
