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

import datetime as dt
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from handlers.common.api_versions import ENRICHMENT_APIS
from handlers.common.retry_after import retry_after_seconds
from handlers.lead_enricher.http_json import HttpAnswer
from handlers.lead_enricher.providers.base import (
    ProviderUnavailable,
    as_int,
    kept,
    linkedin_url,
)
from handlers.lead_enricher.providers.keyed_api import KeyedEnrichmentApi

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


def apollo_wait_seconds(headers: Mapping[str, str], now: dt.datetime) -> float | None:
    """``Retry-After`` when sent; else the longest window whose counter is exhausted."""
    wait = retry_after_seconds(headers.get("retry-after"), now.timestamp())
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


class ApolloOrganizationEnrichment(KeyedEnrichmentApi):
    """The port over Apollo's Organization Enrichment API."""

    name = "apollo"
    default_version = ENRICHMENT_APIS["apollo"].version
    label = "Apollo"

    def url(self, domain: str) -> str:
        bare = domain.strip().lower().removeprefix("www.")
        query = urlencode({"domain": bare})
        return f"{self.base_url}/api/{self.api_version}/organizations/enrich?{query}"

    def wait_seconds(self, headers: Mapping[str, str]) -> float | None:
        return apollo_wait_seconds(headers, self._clock())

    def message(self, answer: HttpAnswer) -> str:
        return _message(answer)

    def read(self, answer: HttpAnswer) -> dict[str, Any] | None:
        if answer.status in (404, 422):
            return None
        if answer.status != 200:
            raise self.unavailable(answer)
        body = answer.body
        if not isinstance(body, Mapping):
            raise ProviderUnavailable("Apollo answered 200 without JSON")
        org = body.get("organization")
        if not isinstance(org, Mapping) or not org:
            return None  # 200 with no record enriched: Apollo does not know the domain
        return organization_fields(org)
