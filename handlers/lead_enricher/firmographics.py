"""The firmographic provider behind a port: a Clearbit-style HTTP adapter and a fake.

``lookup(domain)`` returns the company profile, None when the provider knows no such company,
or raises ``ProviderUnavailable`` when it could not answer now (outage, throttling, a refused
key): the lead is then marked ``enrichment_pending`` and retried later. The key is read from
Secrets Manager at call time, on a cache miss only, through the caller's ``key`` function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import quote

from handlers.lead_enricher.http_json import HttpError, HttpUnavailable, request_json


class ProviderUnavailable(Exception):
    """The provider could not answer now; asking again later may work."""


class FirmographicProvider(Protocol):
    """A company lookup by domain."""

    name: str

    def lookup(self, domain: str) -> dict[str, Any] | None:
        """The company profile for ``domain``; None when unknown; raises ProviderUnavailable."""
        ...


def profile_fields(profile: dict[str, Any]) -> dict[str, Any]:
    """The fields the enricher keeps from a Clearbit-style company profile."""
    category = profile.get("category") or {}
    metrics = profile.get("metrics") or {}
    geo = profile.get("geo") or {}
    linkedin = (profile.get("linkedin") or {}).get("handle")
    found = {
        "company_name": profile.get("name"),
        "industry": category.get("industry") or category.get("sector"),
        "employees": metrics.get("employees"),
        "employees_range": metrics.get("employeesRange"),
        "annual_revenue_range": metrics.get("estimatedAnnualRevenue"),
        "company_country": geo.get("countryCode"),
        "company_city": geo.get("city"),
        "founded_year": profile.get("foundedYear"),
        "linkedin": f"https://www.linkedin.com/{linkedin}" if linkedin else None,
    }
    return {k: v for k, v in found.items() if v not in (None, "", [])}


class HttpFirmographics:
    """``GET {base}/v2/companies/find?domain=...`` with a bearer key."""

    name = "clearbit"

    def __init__(self, base_url: str, key: Callable[[], str], timeout: float = 8.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.key = key
        self.timeout = timeout

    def lookup(self, domain: str) -> dict[str, Any] | None:
        url = f"{self.base_url}/v2/companies/find?domain={quote(domain)}"
        try:
            status, body = request_json(
                "GET", url, headers={"authorization": f"Bearer {self.key()}"}, timeout=self.timeout
            )
        except HttpError as err:
            if err.status in (404, 422):
                return None
            raise ProviderUnavailable(f"provider answered {err.status}") from err
        except HttpUnavailable as err:
            raise ProviderUnavailable(f"provider unreachable: {err}") from err
        if status == 202 or not isinstance(body, dict):
            # 202: the provider is looking the company up asynchronously; ask again later.
            raise ProviderUnavailable(f"provider answered {status} without a profile")
        return profile_fields(body)


class FakeFirmographics:
    """In-memory provider: ``profiles`` by domain; ``down`` makes every call fail."""

    name = "fake"

    def __init__(self, profiles: dict[str, dict[str, Any]] | None = None) -> None:
        self.profiles = dict(profiles or {})
        self.down = False
        self.calls: list[str] = []

    def lookup(self, domain: str) -> dict[str, Any] | None:
        self.calls.append(domain)
        if self.down:
            raise ProviderUnavailable("fake provider is down")
        found = self.profiles.get(domain)
        return None if found is None else dict(found)
