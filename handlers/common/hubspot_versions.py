"""HubSpot's date-based API versions and their support windows (data, no I/O).

HubSpot releases a REST API version every March and September; the path carries it
(``/crm/objects/2026-09/contacts``). Each version is *Current* for 6 months after its GA,
then *Supported* (critical fixes only), and *Unsupported* 18 months after its GA. The
semantic-version paths (``/crm/v3``, ``/crm/v4``) become unsupported in September 2027.

Governing pages:

* "Developer platform and API versioning",
  https://developers.hubspot.com/docs/developer-tooling/platform/versioning (the
  Current / Supported / Unsupported schedule: 6 and 18 months after GA).
* "2026-03 API reference", https://developers.hubspot.com/docs/api-reference/2026-03/overview
  (the path shape ``/api-name/2026-03/resource``, same root ``https://api.hubapi.com``).
* "Migration guide" (legacy APIs),
  https://developers.hubspot.com/docs/api-reference/legacy/migration-guide (date-based
  versions from March 30th 2026; v1-v4 unsupported in September 2027).
* Developer changelog, "Breaking Change: CRM API Write Validation Enforcement Starting with the
  2026-09 API Version" (announced 2026-08-11): ``/2026-09/`` ships on September 8, 2026.

A version missing from ``RELEASES`` is refused by the stack config: add its GA date here (from
the changelog) when HubSpot publishes it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

RELEASES: dict[str, dt.date] = {
    "2026-03": dt.date(2026, 3, 30),
    "2026-09": dt.date(2026, 9, 8),
}
"""GA date of each date-based version HubSpot has published."""

DEFAULT_VERSION = "2026-09"
"""The newest published version: what a new stack calls."""

CURRENT_MONTHS = 6
UNSUPPORTED_MONTHS = 18

Phase = Literal["current", "supported", "unsupported", "unreleased"]


def _add_months(day: dt.date, months: int) -> dt.date:
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return dt.date(year, month, min(day.day, 28))


@dataclass(frozen=True)
class SupportWindow:
    """One version's window: Current until ``supported_from``, Unsupported from ``unsupported_from``."""

    version: str
    released: dt.date
    supported_from: dt.date
    unsupported_from: dt.date

    def phase(self, today: dt.date) -> Phase:
        if today < self.released:
            return "unreleased"
        if today < self.supported_from:
            return "current"
        if today < self.unsupported_from:
            return "supported"
        return "unsupported"

    def describe(self, today: dt.date) -> str:
        """One line for the plan: the phase today and the window's dates."""
        phase = self.phase(today)
        text = (
            f"HubSpot API {self.version}: {phase} on {today.isoformat()} "
            f"(GA {self.released.isoformat()}, current until {self.supported_from.isoformat()}, "
            f"unsupported from {self.unsupported_from.isoformat()})"
        )
        newest = max(RELEASES, key=RELEASES.__getitem__)
        if phase in ("unsupported", "unreleased"):
            return f"WARNING {text}: outside HubSpot's support window, move to {newest}"
        if phase == "supported" and newest != self.version:
            return f"{text}; {newest} is current"
        return text


def window(version: str) -> SupportWindow:
    """The support window of a published version; ``KeyError`` for an unknown one."""
    released = RELEASES[version]
    return SupportWindow(
        version,
        released,
        _add_months(released, CURRENT_MONTHS),
        _add_months(released, UNSUPPORTED_MONTHS),
    )
