"""upsr-order: the Shopify orders/create webhook, a public Function URL (logic in ``orders``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.upsell_recommender import clock, contract, orders

_deps: orders.OrderDeps | None = None


def current_deps() -> orders.OrderDeps:
    """This container's dependencies, built on first use."""
    global _deps
    if _deps is None:
        _deps = orders.OrderDeps.from_settings(settings.current(contract.OrderSettings))
    return _deps


@logged
def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Function URL entry point."""
    return orders.handle(event, current_deps(), now=clock.now())
