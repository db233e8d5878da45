"""upsr-addlink: the one-tap add link behind a public Function URL (logic in ``taps``)."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.function_url import Request
from handlers.upsell_recommender import contract, taps


def wire(config: contract.AddlinkSettings, clock: Clock, **collaborators: Any) -> taps.AddlinkDeps:
    """The real dependencies; ``collaborators`` are the stand-ins tests and the sandbox give."""
    return taps.AddlinkDeps.from_settings(config, **collaborators)


def run(deps: taps.AddlinkDeps, request: Request, context: Any, clock: Clock) -> dict[str, Any]:
    """Function URL entry point."""
    return taps.handle(request, deps, now=clock().timestamp())


handler = entry.handler(__name__, contract.AddlinkSettings, wire, run, url=True)
