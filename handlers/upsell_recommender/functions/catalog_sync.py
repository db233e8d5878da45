"""upsr-catalog-sync: the store's products into upsr-catalogue (logic in ``syncing``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.upsell_recommender import contract, syncing


def wire(config: contract.CatalogSyncSettings, clock: Clock, **collaborators: Any) -> syncing.SyncDeps:
    """The real dependencies; ``collaborators`` are the stand-ins tests and the sandbox give."""
    return syncing.SyncDeps.from_settings(config, clock, **collaborators)


def run(deps: syncing.SyncDeps, event: Mapping[str, Any], context: Any, clock: Clock) -> dict[str, int]:
    """Scheduler entry point."""
    return syncing.run(deps, now=clock().timestamp())


handler = entry.handler(__name__, contract.CatalogSyncSettings, wire, run)
