"""ler's business metrics count real leads only: ``make verify``'s check lead is never business.

Every count ler makes about a lead (``Leads``, ``LeadsJunked``, ``EnrichmentPending``,
``LeadsKept``) goes through :func:`count`, so a check run after each deploy never shows on the
dashboard or moves an alarm (``handlers.common.metrics`` holds the catalogue).
"""

from __future__ import annotations

from handlers.common import metrics
from handlers.lead_enricher.lead import Lead


def count(lead: Lead, name: str, dimension_value: str | None = None) -> None:
    """One of ``name`` for ``lead`` (with its dimension's value), unless it is a check."""
    if lead.is_check:
        return
    metrics.count(name, 1, dimension_value)
