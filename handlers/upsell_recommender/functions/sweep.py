"""upsr-sweep: closes attribution windows and mails the daily roll-up (logic in ``sweeping``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.upsell_recommender import contract, sweeping


def wire(config: contract.SweepSettings, clock: Clock, **collaborators: Any) -> sweeping.SweepDeps:
    """The real dependencies; ``collaborators`` are the stand-ins tests and the sandbox give."""
    return sweeping.SweepDeps.from_settings(config, **collaborators)


def run(deps: sweeping.SweepDeps, event: Mapping[str, Any], context: Any, clock: Clock) -> dict[str, Any]:
    """Scheduler entry point."""
    return sweeping.run(deps, now=clock().timestamp())


handler = entry.handler(__name__, contract.SweepSettings, wire, run)
