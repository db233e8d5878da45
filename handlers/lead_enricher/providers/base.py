"""The firmographic provider port: the lead's fields, the errors, the defaults, the helpers the
adapters share.

``lookup(domain)`` returns the company's fields in the lead's vocabulary (``LEAD_FIELDS``),
None when the provider knows no such company, or raises ``ProviderUnavailable`` when it could
not answer now (outage, throttling, a refused or exhausted key): the lead is then marked
``enrichment_pending`` and retried later. ``RateLimited`` carries the seconds the provider
asked us to wait. The key is read from Secrets Manager at call time (cached briefly) through
the caller's ``key`` function, so a rotated key needs no redeploy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from handlers.common.api_versions import ENRICHMENT_APIS

ProviderName = Literal["pdl", "apollo"]

LEAD_FIELDS = (
    "company_name",
    "company_domain",
    "industry",
    "employees",
    "employees_range",
    "annual_revenue_range",
    "company_city",
    "company_region",
    "company_country",
    "founded_year",
    "linkedin",
)
"""What an adapter may return; each value is then tagged with its source and date."""


class ProviderUnavailable(Exception):
    """The provider could not answer now; asking again later may work."""


class RateLimited(ProviderUnavailable):
    """The provider throttled us (HTTP 429); ``retry_after_s`` is how long it asked us to wait."""

    def __init__(self, message: str, retry_after_s: float | None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class FirmographicProvider(Protocol):
    """A company lookup by domain."""

    name: str

    def lookup(self, domain: str) -> dict[str, Any] | None:
        """The company's fields for ``domain``; None when unknown; raises ProviderUnavailable."""
        ...


@dataclass(frozen=True)
class ProviderDefaults:
    """Where a provider lives and which API version this program speaks to it."""

    base_url: str
    api_version: str


DEFAULTS: Mapping[str, ProviderDefaults] = {
    name: ProviderDefaults(api.base_url, api.version) for name, api in ENRICHMENT_APIS.items()
}
"""Per-provider defaults; stack config may override either (``enrichmentBaseUrl``,
``enrichmentApiVersion``)."""


def kept(found: Mapping[str, Any]) -> dict[str, Any]:
    """The lead fields that carry a value (no None, empty string or empty list)."""
    return {k: v for k, v in found.items() if k in LEAD_FIELDS and v not in (None, "", [], {})}


def as_int(value: Any) -> int | None:
    """An integer field the provider may send as int, float or numeric string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def linkedin_url(value: Any) -> str | None:
    """``linkedin.com/company/x`` or ``http://www.linkedin.com/company/x`` -> https://www...."""
    if not isinstance(value, str) or "linkedin.com/" not in value:
        return None
    path = value.split("linkedin.com/", 1)[1].strip("/")
    return f"https://www.linkedin.com/{path}" if path else None
