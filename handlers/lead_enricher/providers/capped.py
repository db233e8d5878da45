"""A provider whose lookups take one of the day's ``dailyEnrichmentLookups`` first.

A lookup past the cap is not made: it raises ``RateLimited`` with the seconds to the next UTC
day, so the lead goes on without firmographics, is marked ``pending`` with that ``retry_at``,
and ler-retry (or ler-backfill) enriches it once the day turns (handlers/lead_enricher/redrive.py).
The count, the metric and the once-a-day alarm are handlers/common/spend.py's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from handlers.common.spend import CapReached
from handlers.lead_enricher.providers.base import FirmographicProvider, RateLimited

if TYPE_CHECKING:
    from handlers.common.spend import SpendGuard


class CappedProvider:
    """``inner`` behind the system's daily lookup counter."""

    def __init__(self, inner: FirmographicProvider, guard: SpendGuard) -> None:
        self.inner = inner
        self.guard = guard
        self.name = inner.name

    def lookup(self, domain: str) -> dict[str, Any] | None:
        try:
            self.guard.reserve("lookup")
        except CapReached as capped:
            wait = (capped.resume_at - self.guard.clock()).total_seconds()
            raise RateLimited(f"daily enrichment lookup cap of {capped.cap} reached", wait) from None
        return self.inner.lookup(domain)
