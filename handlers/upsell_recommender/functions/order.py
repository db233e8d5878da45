"""upsr-order: the Shopify orders/create webhook, a public Function URL (logic in ``orders``)."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.function_url import Request
from handlers.upsell_recommender import contract, orders


def wire(config: contract.OrderSettings, clock: Clock, **collaborators: Any) -> orders.OrderDeps:
    """The real dependencies; ``collaborators`` are the stand-ins tests and the sandbox give."""
    return orders.OrderDeps.from_settings(config, **collaborators)


def run(deps: orders.OrderDeps, request: Request, context: Any, clock: Clock) -> dict[str, Any]:
    """Function URL entry point."""
    return orders.handle(request, deps, now=clock().timestamp())


handler = entry.handler(__name__, contract.OrderSettings, wire, run, url=True)
