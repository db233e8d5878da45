"""Configuration from the environment the infra sets (names, ARNs, URLs: never secret values).

Each handler reads only what it needs, at call time, so a function missing a variable fails
with the variable's name instead of a KeyError deep in the flow, and tests set env vars only.
"""

from __future__ import annotations

import os

from handlers.review_requests.timing import Window


class MissingSetting(RuntimeError):
    """A variable the infra should have set is absent."""


def text(name: str, default: str | None = None) -> str:
    """The variable ``name``; ``default`` when unset, else MissingSetting."""
    value = os.environ.get(name)
    if value is None or value == "":
        if default is not None:
            return default
        raise MissingSetting(f"environment variable {name} is not set")
    return value


def number(name: str, default: int | None = None) -> int:
    """The integer variable ``name``."""
    raw = text(name, None if default is None else str(default))
    try:
        return int(raw)
    except ValueError as err:
        raise MissingSetting(f"environment variable {name} is not an integer") from err


def window() -> Window:
    """The opening hours (send window and sweep gate)."""
    return Window(text("RRS_OPENING_START", "09:00"), text("RRS_OPENING_END", "18:00"))


def business_timezone() -> str:
    return text("RRS_OPENING_TIMEZONE", "Europe/London")


def phone_region() -> str:
    return text("RRS_PHONE_REGION", "GB")
