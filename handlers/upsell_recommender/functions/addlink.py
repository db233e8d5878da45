"""upsr-addlink: the one-tap add link behind a public Function URL (logic in ``taps``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.upsell_recommender import contract, taps


def wire(config: contract.AddlinkSettings, clock: Clock, **collaborators: Any) -> taps.AddlinkDeps:
    """The real dependencies; ``collaborators`` are the stand-ins tests and the sandbox give."""
    return taps.AddlinkDeps.from_settings(config, **collaborators)


def run(deps: taps.AddlinkDeps, event: Mapping[str, Any], context: Any, clock: Clock) -> dict[str, Any]:
    """Function URL entry point."""
    return taps.handle(event, deps, now=clock().timestamp())


handler = entry.handler(__name__, contract.AddlinkSettings, wire, run)
