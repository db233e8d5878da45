"""Time: the send window, the due time of an ask, and the ISO strings stored in DynamoDB.

Every stored time is UTC ISO-8601 with a ``Z`` (``2026-05-01T09:00:00Z``), so the ``due`` sort
key of the state GSI compares as time. The send window is the business's opening hours read
in the customer's own time zone: an ask never lands at 3 a.m. where the customer is.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UTC = dt.UTC
ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
MIN_LEAD = dt.timedelta(minutes=2)
"""A schedule is never created for less than this ahead of now (Scheduler needs a future at())."""


def iso(moment: dt.datetime) -> str:
    """``moment`` as stored: UTC, second precision, ``Z`` suffix."""
    return moment.astimezone(UTC).strftime(ISO_FORMAT)


def iso_micro(moment: dt.datetime) -> str:
    """UTC with microseconds, for audit sort keys that must not collide within a second."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(text: str) -> dt.datetime:
    """An ISO-8601 timestamp with an offset (``Z`` allowed) as an aware UTC datetime.

    Raises ValueError for a naive or malformed timestamp: a time without a zone is ambiguous.
    """
    value = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone offset")
    return value.astimezone(UTC)


class NoZoneData(RuntimeError):
    """Neither the system's zone database nor the ``tzdata`` package is available."""


def zone(name: str | None, fallback: str) -> ZoneInfo:
    """The IANA zone ``name``, or ``fallback`` when it is empty or unknown, else UTC.

    zoneinfo reads the system's database first and falls back to the ``tzdata`` package on its
    own; the functions vendor ``tzdata``, so a Lambda image without ``/usr/share/zoneinfo``
    still has every zone. Raises NoZoneData only when neither exists: every send window would
    silently be UTC otherwise.
    """
    for candidate in (name, fallback, "UTC"):
        if candidate:
            try:
                return ZoneInfo(candidate)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    raise NoZoneData(
        "no IANA time zone data: neither the system database (zoneinfo.TZPATH) nor the "
        "tzdata package is available; vendor tzdata into the function"
    )


def _clock(text: str) -> dt.time:
    hours, minutes = text.split(":")
    return dt.time(int(hours), int(minutes))


@dataclass(frozen=True)
class Window:
    """Daily opening hours ``start``-``end`` (HH:MM, end exclusive), read in a time zone."""

    start: str
    end: str

    def __post_init__(self) -> None:
        if _clock(self.start) >= _clock(self.end):
            raise ValueError("opening hours must start before they end on the same day")

    def contains(self, moment: dt.datetime, tz: ZoneInfo) -> bool:
        """Whether ``moment`` falls inside the hours where ``tz`` is."""
        local = moment.astimezone(tz).time()
        return _clock(self.start) <= local < _clock(self.end)

    def next_open(self, moment: dt.datetime, tz: ZoneInfo) -> dt.datetime:
        """``moment`` if inside the hours, else the next opening time in ``tz`` (as UTC)."""
        if self.contains(moment, tz):
            return moment.astimezone(UTC)
        local = moment.astimezone(tz)
        day = local.date()
        if local.time() >= _clock(self.end):
            day += dt.timedelta(days=1)
        opening = dt.datetime.combine(day, _clock(self.start), tzinfo=tz)
        return opening.astimezone(UTC)


def due_time(
    completed_at: dt.datetime,
    *,
    delay: dt.timedelta,
    window: Window,
    tz: ZoneInfo,
    now: dt.datetime,
) -> dt.datetime:
    """When the ask for a job completed at ``completed_at`` should go out.

    ``delay`` after completion, moved forward into the customer's opening hours, and never
    earlier than ``MIN_LEAD`` from now (a late webhook still gets a schedule that fires).
    """
    wanted = max(completed_at + delay, now + MIN_LEAD)
    return window.next_open(wanted, tz).replace(microsecond=0)
