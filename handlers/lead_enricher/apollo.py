"""Apollo Organization Enrichment API: one company by its domain, mapped to lead fields.

Request (``GET {base}/api/{version}/organizations/enrich?domain=<domain>``, key in the
``x-api-key`` header), answers and limits, as documented by Apollo:

- Organization Enrichment (reference as reproduced at
  https://www.withone.ai/knowledge/apollo/conn_mod_def%3A%3AGJz1-vQqfEI%3A%3ArFgxNc8wQFWyV5kX88UBpg
  from Apollo's API reference): ``GET https://api.apollo.io/api/v1/organizations/enrich``,
  ``domain`` required, without ``www.`` or ``@``; 200 ``{"organization": {...}}`` with
  ``name``, ``primary_domain``, ``website_url``, ``linkedin_url``, ``founded_year``,
  ``industry``, ``estimated_num_employees``, ``annual_revenue_printed``, ``city``, ``state``,
  ``country``; consumes credits.
- "API Pricing", https://docs.apollo.io/docs/api-pricing  (``v1/organizations/enrich``
  consumes credits; access depends on the plan).
- "Rate Limits", https://docs.apollo.io/reference/rate-limits  fixed-window limits per minute,
  hour and day by plan; every answer carries ``x-minute-requests-left``,
  ``x-hourly-requests-left``, ``x-daily-requests-left`` and ``x-rate-limit-minute|hourly|daily``.
- Authentication: API keys go in the ``X-Api-Key`` header (Apollo API docs,
  https://apolloio.github.io/apollo-api-docs/ "Authentication"); a key is created in Apollo under
  Settings > Integrations > API > API Keys, with the Organization Enrichment endpoint
  enabled or as a master key (https://docs.nango.dev/integrations/all/apollo/connect).
- People Enrichment, https://docs.apollo.io/reference/people-enrichment.md : a request Apollo
  cannot match may still answer 200 with no record enriched, so an empty 200 is "unknown".

How answers are read: 200 with an organization -> fields; 200 without one, 404 or 422 (a
domain Apollo refuses) -> None; 401, 403 (key lacks the endpoint or the plan lacks API
access), 5xx -> ``ProviderUnavailable``; 429 -> waits once in-call for a short
``Retry-After``, else ``RateLimited``. Apollo does not document a ``Retry-After``; when none
is sent the wait is the window whose counter reached zero (minute 60 s, hour 3600 s, day
86400 s: an upper bound, since the fixed window's start is not sent).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from handlers.lead_enricher.firmographics import (
    ProviderUnavailable,
    RateLimited,
    as_int,
    kept,
    linkedin_url,
    retry_after_seconds,
)
from handlers.lead_enricher.http_json import HttpAnswer, HttpUnavailable, exchange

Exchange = Callable[..., HttpAnswer]

WINDOWS = (
    ("x-minute-requests-left", 60.0),
    ("x-hourly-requests-left", 3600.0),
    ("x-daily-requests-left", 86400.0),
)
"""Apollo's counters and the length of their fixed windows, shortest first."""


def organization_fields(org: Mapping[str, Any]) -> dict[str, Any]:
    """The lead fields in an Apollo organization object."""
    domain = org.get("primary_domain")
    return kept(
        {
            "company_name": org.get("name"),
            "company_domain": domain,
            "industry": org.get("industry"),
            "employees": as_int(org.get("estimated_num_employees")),
            "annual_revenue_range": org.get("annual_revenue_printed"),
            "company_city": org.get("city"),
            "company_region": org.get("state"),
            "company_country": org.get("country"),
            "founded_year": as_int(org.get("founded_year")),
            "linkedin": linkedin_url(org.get("linkedin_url")),
        }
    )


def apollo_wait_seconds(headers: Mapping[str, str]) -> float | None:
    """``Retry-After`` when sent; else the longest window whose counter is exhausted."""
    wait = retry_after_seconds(headers)
    if wait is not None:
        return wait
    exhausted = [length for name, length in WINDOWS if headers.get(name, "").strip() == "0"]
    return max(exhausted) if exhausted else None


def _message(answer: HttpAnswer) -> str:
    body = answer.body
    if isinstance(body, Mapping):
        for field in ("error", "message", "error_message"):
            if body.get(field):
                return str(body[field])[:160]
    return str(body)[:160] if body else ""


class ApolloOrganizationEnrichment:
    """The port over Apollo's Organization Enrichment API."""

    name = "apollo"

    def __init__(
        self,
        base_url: str,
        key: Callable[[], str],
        *,
        api_version: str = "v1",
        timeout: float = 8.0,
        max_wait_s: float = 3.0,
        transport: Exchange = exchange,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_version = api_version.strip("/")
        self.key = key
        self.timeout = timeout
        self.max_wait_s = max_wait_s
        self._exchange = transport
        self._sleep = sleep
        self.last_headers: Mapping[str, str] = {}

    def url(self, domain: str) -> str:
        bare = domain.strip().lower().removeprefix("www.")
        query = urlencode({"domain": bare})
        return f"{self.base_url}/api/{self.api_version}/organizations/enrich?{query}"

    def lookup(self, domain: str) -> dict[str, Any] | None:
        waited = False
        while True:
            answer = self._call(domain)
            if answer.status != 429:
                return self._read(answer)
            wait = apollo_wait_seconds(answer.headers)
            if waited or wait is None or wait > self.max_wait_s:
                raise RateLimited(f"Apollo answered 429 ({_message(answer)})", wait)
            self._sleep(wait)
            waited = True

    def _call(self, domain: str) -> HttpAnswer:
        try:
            answer = self._exchange(
                "GET", self.url(domain), headers={"X-Api-Key": self.key()}, timeout=self.timeout
            )
        except HttpUnavailable as err:
            raise ProviderUnavailable(f"Apollo unreachable: {err}") from err
        self.last_headers = answer.headers
        return answer

    def _read(self, answer: HttpAnswer) -> dict[str, Any] | None:
        if answer.status in (404, 422):
            return None
        if answer.status != 200:
            raise ProviderUnavailable(f"Apollo answered {answer.status} ({_message(answer)})")
        body = answer.body
        if not isinstance(body, Mapping):
            raise ProviderUnavailable("Apollo answered 200 without JSON")
        org = body.get("organization")
        if not isinstance(org, Mapping) or not org:
            return None  # 200 with no record enriched: Apollo does not know the domain
        return organization_fields(org)
