"""upsr-compliance: Shopify's compliance webhooks, a public Function URL (logic in ``compliance``)."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.function_url import Request
from handlers.upsell_recommender import compliance, contract


def wire(config: contract.ComplianceSettings, clock: Clock, **collaborators: Any) -> compliance.ComplianceDeps:
    """The real dependencies; ``collaborators`` are the stand-ins tests and the sandbox give."""
    return compliance.ComplianceDeps.from_settings(config, **collaborators)


def run(deps: compliance.ComplianceDeps, request: Request, context: Any, clock: Clock) -> dict[str, Any]:
    """Function URL entry point."""
    return compliance.handle(request, deps)


handler = entry.handler(__name__, contract.ComplianceSettings, wire, run, url=True)
