"""upsr-addlink: the one-tap add link behind a public Function URL (logic in ``taps``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.upsell_recommender import clock, contract, taps

_deps: taps.AddlinkDeps | None = None


def current_deps() -> taps.AddlinkDeps:
    """This container's dependencies, built on first use."""
    global _deps
    if _deps is None:
        _deps = taps.AddlinkDeps.from_settings(settings.current(contract.AddlinkSettings))
    return _deps


@logged
def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Function URL entry point."""
    return taps.handle(event, current_deps(), now=clock.now())
