"""upsr-sweep: closes attribution windows and mails the daily roll-up (logic in ``sweeping``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.upsell_recommender import clock, contract, sweeping

_deps: sweeping.SweepDeps | None = None


def current_deps() -> sweeping.SweepDeps:
    """This container's dependencies, built on first use."""
    global _deps
    if _deps is None:
        _deps = sweeping.SweepDeps.from_settings(settings.current(contract.SweepSettings))
    return _deps


@logged
def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Scheduler entry point."""
    return sweeping.run(current_deps(), now=clock.now())
