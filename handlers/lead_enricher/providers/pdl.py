"""People Data Labs Company Enrichment API: one company by its website, mapped to lead fields.

Request (``GET {base}/{version}/company/enrich?website=<domain>&titlecase=true``, key in the
``X-Api-Key`` header), answers and limits, as documented by PDL:

- "Reference - Company Enrichment API", https://docs.peopledatalabs.com/docs/reference-company-enrichment-api
  endpoint ``https://api.peopledatalabs.com/v5/company/enrich``; 200 with the company when it
  matches, 404 when it does not ("We charge per match"); 10 requests/minute on a free plan,
  1,000/minute paid.
- "Input Parameters - Company Enrichment API", https://docs.peopledatalabs.com/docs/input-parameters-company-enrichment-api
  ``website`` is one of the identifiers a request needs; ``titlecase`` returns titlecased
  values instead of the default lowercase.
- "Output Response - Company Enrichment API", https://docs.peopledatalabs.com/docs/output-response-company-enrichment-api
  the profile fields sit at the top level (no ``data`` object) beside ``status`` and
  ``likelihood``: ``name``, ``display_name``, ``website``, ``size``, ``employee_count``,
  ``founded``, ``industry``, ``location.{locality,region,country}``, ``linkedin_url``,
  ``inferred_revenue``; a field PDL has no data for is null.
- "Authentication", https://docs.peopledatalabs.com/docs/authentication  (``X-Api-Key`` header).
- "Errors & Status Codes", https://docs.peopledatalabs.com/docs/errors
  400 invalid_request_error, 401 authentication_error, 402 payment_required (all matches
  used), 404 not_found, 405, 429 rate_limit_error, 5xx api_error; error body
  ``{"status": n, "error": {"type": ..., "message": ...}}``.
- "Usage Limits", https://docs.peopledatalabs.com/docs/usage-limits
  per-key fixed-window limits; ``x-ratelimit-reset`` (UTC timestamp of the window's reset),
  ``x-ratelimit-remaining`` / ``x-ratelimit-limit``; older answers also carry ``retry-after``.

How answers are read: 200 -> fields; 404 -> None (unknown company; cached as such); 400 ->
None (PDL cannot use this website as input: asking again will not help); 401, 402, 405, 5xx
-> ``ProviderUnavailable`` (pending, retried after the operator fixes the key or credits);
429 -> waits once in-call when the provider asks for at most ``max_wait_s``, else
``RateLimited`` with the wait taken from ``Retry-After`` or ``x-ratelimit-reset``.
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


def company_fields(profile: Mapping[str, Any]) -> dict[str, Any]:
    """The lead fields in a PDL company record (Company Schema)."""
    location = profile.get("location") or {}
    if not isinstance(location, Mapping):
        location = {}
    return kept(
        {
            "company_name": profile.get("display_name") or profile.get("name"),
            "company_domain": profile.get("website"),
            "industry": profile.get("industry"),
            "employees": as_int(profile.get("employee_count")),
            "employees_range": profile.get("size"),
            "annual_revenue_range": profile.get("inferred_revenue"),
            "company_city": location.get("locality"),
            "company_region": location.get("region"),
            "company_country": location.get("country"),
            "founded_year": as_int(profile.get("founded")),
            "linkedin": linkedin_url(profile.get("linkedin_url")),
        }
    )


def pdl_wait_seconds(headers: Mapping[str, str], now: dt.datetime) -> float | None:
    """How long a 429 asks us to wait: ``Retry-After``, else ``x-ratelimit-reset``."""
    wait = retry_after_seconds(headers.get("retry-after"), now.timestamp())
    if wait is not None:
        return wait
    reset = headers.get("x-ratelimit-reset", "").strip()
    if not reset:
        return None
    try:
        if reset.isdigit():  # older answers: UTC epoch seconds
            when = dt.datetime.fromtimestamp(int(reset), dt.UTC)
        else:  # current answers: "2022-02-23T20:19:55Z"
            when = dt.datetime.fromisoformat(reset.replace("Z", "+00:00"))
    except (ValueError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max((when - now).total_seconds(), 0.0)


def _message(answer: HttpAnswer) -> str:
    body = answer.body
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        error = body["error"]
        return f"{error.get('type', '?')}: {str(error.get('message', ''))[:160]}"
    return str(body)[:160] if body else ""


class PdlCompanyEnrichment(KeyedEnrichmentApi):
    """The port over PDL's Company Enrichment API."""

    name = "pdl"
    default_version = ENRICHMENT_APIS["pdl"].version
    label = "PDL"

    def url(self, domain: str) -> str:
        query = urlencode({"website": domain, "titlecase": "true"})
        return f"{self.base_url}/{self.api_version}/company/enrich?{query}"

    def wait_seconds(self, headers: Mapping[str, str]) -> float | None:
        return pdl_wait_seconds(headers, self._clock())

    def message(self, answer: HttpAnswer) -> str:
        return _message(answer)

    def read(self, answer: HttpAnswer) -> dict[str, Any] | None:
        if answer.status in (400, 404):
            return None
        if answer.status != 200:
            raise self.unavailable(answer)
        if not isinstance(answer.body, Mapping):
            raise ProviderUnavailable("PDL answered 200 without a company record")
        return company_fields(answer.body)
