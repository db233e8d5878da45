"""upsr-sender: releases due offers, one nudge each, on a schedule (logic in ``sending``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.upsell_recommender import clock, contract, sending

_deps: sending.SenderDeps | None = None


def current_deps() -> sending.SenderDeps:
    """This container's dependencies, built on first use."""
    global _deps
    if _deps is None:
        _deps = sending.SenderDeps.from_settings(settings.current(contract.SenderSettings))
    return _deps


@logged
def handler(event: Mapping[str, Any], context: Any) -> dict[str, int]:
    """Scheduler entry point; returns the count of each outcome."""
    return sending.run(current_deps(), now=clock.now())
