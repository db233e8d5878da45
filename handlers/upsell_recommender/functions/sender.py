"""upsr-sender: releases due offers, one nudge each, on a schedule (logic in ``sending``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.upsell_recommender import contract, sending


def wire(config: contract.SenderSettings, clock: Clock, **collaborators: Any) -> sending.SenderDeps:
    """The real dependencies; ``collaborators`` are the stand-ins tests and the sandbox give."""
    return sending.SenderDeps.from_settings(config, clock=clock, **collaborators)


def run(deps: sending.SenderDeps, event: Mapping[str, Any], context: Any, clock: Clock) -> dict[str, int]:
    """Scheduler entry point; returns the count of each outcome."""
    return sending.run(deps, now=clock().timestamp())


handler = entry.handler(__name__, contract.SenderSettings, wire, run)
