"""upsr-catalog-sync: the store's products into upsr-catalogue (logic in ``syncing``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.upsell_recommender import clock, contract, syncing

_deps: syncing.SyncDeps | None = None


def current_deps() -> syncing.SyncDeps:
    """This container's dependencies, built on first use."""
    global _deps
    if _deps is None:
        _deps = syncing.SyncDeps.from_settings(settings.current(contract.CatalogSyncSettings))
    return _deps


@logged
def handler(event: Mapping[str, Any], context: Any) -> dict[str, int]:
    """Scheduler entry point."""
    return syncing.run(current_deps(), now=clock.now())
