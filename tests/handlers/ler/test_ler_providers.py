"""Contract tests of the firmographic adapters: PDL Company Enrichment and Apollo Organization
Enrichment, replayed over real HTTP against a local server (127.0.0.1, no network).

Each answer below is the provider's documented example (the page is named above it): the
success record, the not-found answer, the authentication error, and a 429 with the headers the
provider documents. The tests check the exact request each adapter sends (path, query, key
header) and how it reads each answer into the lead's fields or into "unknown" / "try later".
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from handlers.lead_enricher.providers.apollo import (
    ApolloOrganizationEnrichment,
    apollo_wait_seconds,
)
from handlers.lead_enricher.providers.base import (
    DEFAULTS,
    LEAD_FIELDS,
    ProviderUnavailable,
    RateLimited,
)
from handlers.lead_enricher.providers.factory import make_provider
from handlers.lead_enricher.providers.pdl import PdlCompanyEnrichment, pdl_wait_seconds
from sandbox.local_http import LocalHttpServer

Answer = tuple[int, Any, dict[str, str]]


@dataclass
class Provider:
    """A scripted HTTP server: each request pops the next (status, body, headers)."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)

    def answer(self, status: int, body: Any = None, **headers: str) -> None:
        self.answers.append((status, body, {k.replace("_", "-"): v for k, v in headers.items()}))

    def query(self, index: int = -1) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.requests[index]["path"]).query)

    def path(self, index: int = -1) -> str:
        path: str = urlsplit(self.requests[index]["path"]).path
        return path


@pytest.fixture
def provider() -> Iterator[Provider]:
    state = Provider(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(
                {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
            )
            status, body, headers = (
                state.answers.pop(0) if state.answers else (500, {"message": "unscripted"}, {})
            )
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = LocalHttpServer(Handler, name="provider-stub").start()
    state.url = f"http://localhost:{httpd.port}"
    yield state
    httpd.stop()


class Key:
    """Counts reads: the key is fetched at call time, every call (rotation without redeploy)."""

    def __init__(self, value: str) -> None:
        self.value = value
        self.reads = 0

    def __call__(self) -> str:
        self.reads += 1
        return self.value


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


NOW = dt.datetime(2026, 12, 1, 10, 0, 0, tzinfo=dt.UTC)

# People Data Labs ---------------------------------------------------------------------------

# "Output Response - Company Enrichment API" (docs.peopledatalabs.com/docs/output-response-
# company-enrichment-api), full example response, abridged to the fields the adapter reads
# plus a few it must ignore.
PDL_GOOGLE = {
    "status": 200,
    "name": "google",
    "size": "10001+",
    "employee_count": 260979,
    "id": "google",
    "founded": 1998,
    "industry": "internet",
    "location": {
        "name": "mountain view, california, united states",
        "locality": "mountain view",
        "region": "california",
        "metro": "san francisco, california",
        "country": "united states",
        "continent": "north america",
        "street_address": "1600 amphitheatre parkway",
        "address_line_2": None,
        "postal_code": "94043",
        "geo": None,
    },
    "linkedin_id": "1441",
    "linkedin_url": "linkedin.com/company/google",
    "facebook_url": "facebook.com/google",
    "twitter_url": "twitter.com/google",
    "website": "google.com",
    "ticker": "GOOGL",
    "type": "public",
    "inferred_revenue": None,
    "likelihood": 6,
}
# "Errors & Status Codes" (docs.peopledatalabs.com/docs/errors): the example bodies and types.
PDL_404 = {
    "status": 404,
    "error": {"type": "not_found", "message": "No records were found matching your request"},
}
PDL_429 = {
    "status": 429,
    "error": {
        "type": "rate_limit_error",
        "message": "An error occurred due to requests hitting the API too quick",
    },
}
PDL_401 = {
    "status": 401,
    "error": {
        "type": "authentication_error",
        "message": "The request contained a missing or invalid key.",
    },
}
PDL_402 = {
    "status": 402,
    "error": {
        "type": "payment_required",
        "message": "You have reached your account maximum (all matches have been used).",
    },
}


def pdl(provider: Provider, key: Key, **kwargs: Any) -> PdlCompanyEnrichment:
    return PdlCompanyEnrichment(provider.url, key, clock=lambda: NOW, **kwargs)


def test_pdl_sends_the_documented_request_and_maps_the_example_record(
    provider: Provider,
) -> None:
    key = Key("pdl_live_1")
    provider.answer(200, PDL_GOOGLE, x_ratelimit_remaining='{"minute": 9}')
    assert pdl(provider, key).lookup("google.com") == {
        "company_name": "google",
        "company_domain": "google.com",
        "industry": "internet",
        "employees": 260979,
        "employees_range": "10001+",
        "company_city": "mountain view",
        "company_region": "california",
        "company_country": "united states",
        "founded_year": 1998,
        "linkedin": "https://www.linkedin.com/company/google",
    }
    assert provider.path() == "/v5/company/enrich"
    assert provider.query() == {"website": ["google.com"], "titlecase": ["true"]}
    assert provider.requests[0]["headers"]["x-api-key"] == "pdl_live_1"
    assert "api_key" not in provider.query()  # the key never travels in the URL


def test_pdl_not_found_is_unknown_and_a_rotated_key_is_used_next_call(
    provider: Provider,
) -> None:
    key = Key("pdl_live_1")
    adapter = pdl(provider, key)
    provider.answer(404, PDL_404)
    assert adapter.lookup("nobody.example") is None
    key.value = "pdl_live_2"
    provider.answer(400, {"status": 400, "error": {"type": "invalid_request_error"}})
    assert adapter.lookup("not a website") is None  # PDL cannot use the input: unknown
    assert key.reads == 2 and provider.requests[1]["headers"]["x-api-key"] == "pdl_live_2"


@pytest.mark.parametrize(("status", "body"), [(401, PDL_401), (402, PDL_402), (503, None)])
def test_pdl_auth_credit_and_server_errors_leave_the_lead_pending(
    provider: Provider, status: int, body: Any
) -> None:
    provider.answer(status, body)
    with pytest.raises(ProviderUnavailable, match=f"PDL answered {status}") as caught:
        pdl(provider, Key("k")).lookup("google.com")
    assert not isinstance(caught.value, RateLimited)


def test_pdl_429_with_a_short_retry_after_is_waited_out_once(provider: Provider) -> None:
    sleeps = Sleeps()
    provider.answer(429, PDL_429, retry_after="2")
    provider.answer(200, PDL_GOOGLE)
    assert pdl(provider, Key("k"), sleep=sleeps).lookup("google.com") is not None
    assert sleeps == [2.0] and len(provider.requests) == 2


def test_pdl_429_with_a_long_reset_is_rate_limited_with_the_wait(provider: Provider) -> None:
    sleeps = Sleeps()
    # "Usage Limits": x-ratelimit-reset is the UTC timestamp at which the window resets.
    provider.answer(429, PDL_429, x_ratelimit_reset="2026-12-01T10:00:45Z")
    with pytest.raises(RateLimited, match="rate_limit_error") as caught:
        pdl(provider, Key("k"), sleep=sleeps).lookup("google.com")
    assert caught.value.retry_after_s == 45.0
    assert sleeps == [] and len(provider.requests) == 1


def test_pdl_a_second_429_after_waiting_gives_up(provider: Provider) -> None:
    provider.answer(429, PDL_429, retry_after="1")
    provider.answer(429, PDL_429, retry_after="1")
    with pytest.raises(RateLimited):
        pdl(provider, Key("k"), sleep=Sleeps()).lookup("google.com")
    assert len(provider.requests) == 2


def test_pdl_wait_reads_retry_after_then_both_reset_formats() -> None:
    assert pdl_wait_seconds({"retry-after": "59"}, NOW) == 59.0
    # The older documented form: x-ratelimit-reset in UTC epoch seconds.
    assert pdl_wait_seconds({"x-ratelimit-reset": str(int(NOW.timestamp()) + 30)}, NOW) == 30.0
    assert pdl_wait_seconds({"x-ratelimit-reset": "2026-12-01T09:59:00Z"}, NOW) == 0.0
    assert pdl_wait_seconds({}, NOW) is None


# Apollo ---------------------------------------------------------------------------------------

# Organization Enrichment reference, 200 example (as reproduced from Apollo's API reference):
# the fields shown there verbatim; industry, head count, revenue and location are named by the
# reference and carry illustrative values.
APOLLO_ORG: dict[str, Any] = {
    "organization": {
        "id": "5e66b6381e05b4008c8331b8",
        "name": "Apollo.io",
        "website_url": "http://www.apollo.io",
        "blog_url": None,
        "angellist_url": None,
        "linkedin_url": "http://www.linkedin.com/company/apolloio",
        "twitter_url": "https://twitter.com/meetapollo/",
        "facebook_url": "https://www.facebook.com/MeetApollo",
        "primary_phone": {},
        "languages": [],
        "alexa_ranking": 3514,
        "phone": None,
        "linkedin_uid": "18511550",
        "founded_year": 2015,
        "publicly_traded_symbol": None,
        "publicly_traded_exchange": None,
        "primary_domain": "apollo.io",
        "industry": "information technology & services",
        "estimated_num_employees": 1600,
        "annual_revenue_printed": "100M",
        "city": "San Francisco",
        "state": "California",
        "country": "United States",
    }
}
# "Rate Limits" (docs.apollo.io/reference/rate-limits): the documented header examples.
APOLLO_RATE = {
    "x_daily_requests_left": "295",
    "x_daily_usage": "5",
    "x_hourly_requests_left": "95",
    "x_hourly_usage": "5",
    "x_minute_requests_left": "45",
    "x_minute_usage": "5",
    "x_rate_limit_daily": "300",
    "x_rate_limit_hourly": "100",
    "x_rate_limit_minute": "50",
}


def apollo(provider: Provider, key: Key, **kwargs: Any) -> ApolloOrganizationEnrichment:
    return ApolloOrganizationEnrichment(provider.url, key, clock=lambda: NOW, **kwargs)


def test_apollo_sends_the_documented_request_and_maps_the_example(provider: Provider) -> None:
    key = Key("apollo_key_1")
    provider.answer(200, APOLLO_ORG, **APOLLO_RATE)
    adapter = apollo(provider, key)
    assert adapter.lookup("www.apollo.io") == {
        "company_name": "Apollo.io",
        "company_domain": "apollo.io",
        "industry": "information technology & services",
        "employees": 1600,
        "annual_revenue_range": "100M",
        "company_city": "San Francisco",
        "company_region": "California",
        "company_country": "United States",
        "founded_year": 2015,
        "linkedin": "https://www.linkedin.com/company/apolloio",
    }
    assert provider.path() == "/api/v1/organizations/enrich"
    assert provider.query() == {"domain": ["apollo.io"]}  # no www., as the reference asks
    assert provider.requests[0]["headers"]["x-api-key"] == "apollo_key_1"
    assert adapter.last_headers["x-minute-requests-left"] == "45"


@pytest.mark.parametrize(
    ("status", "body"), [(200, {}), (200, {"organization": None}), (404, None), (422, {})]
)
def test_apollo_unknown_domains_are_unknown(provider: Provider, status: int, body: Any) -> None:
    provider.answer(status, body)
    assert apollo(provider, Key("k")).lookup("nobody.example") is None


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (401, {"error": "Invalid access credentials."}),
        (403, {"error": "api/v1/organizations/enrich is not accessible with this api_key"}),
        (500, None),
    ],
)
def test_apollo_refused_keys_and_outages_leave_the_lead_pending(
    provider: Provider, status: int, body: Any
) -> None:
    provider.answer(status, body)
    with pytest.raises(ProviderUnavailable, match=f"Apollo answered {status}"):
        apollo(provider, Key("k")).lookup("apollo.io")


def test_apollo_429_with_retry_after_is_waited_out_once(provider: Provider) -> None:
    sleeps = Sleeps()
    provider.answer(429, {"message": "rate limit"}, retry_after="1")
    provider.answer(200, APOLLO_ORG)
    assert apollo(provider, Key("k"), sleep=sleeps).lookup("apollo.io") is not None
    assert sleeps == [1.0]


def test_apollo_429_with_an_exhausted_hour_waits_for_the_hour(provider: Provider) -> None:
    headers = dict(APOLLO_RATE, x_hourly_requests_left="0", x_minute_requests_left="0")
    provider.answer(429, {"message": "rate limit"}, **headers)
    with pytest.raises(RateLimited) as caught:
        apollo(provider, Key("k"), sleep=Sleeps()).lookup("apollo.io")
    assert caught.value.retry_after_s == 3600.0 and len(provider.requests) == 1


def test_apollo_wait_prefers_retry_after_then_the_exhausted_window() -> None:
    assert apollo_wait_seconds({"retry-after": "12"}, NOW) == 12.0
    assert apollo_wait_seconds({"retry-after": "Tue, 01 Dec 2026 10:00:30 GMT"}, NOW) == 30.0
    assert apollo_wait_seconds({"x-minute-requests-left": "0"}, NOW) == 60.0
    both = {"x-daily-requests-left": "0", "x-minute-requests-left": "0"}
    assert apollo_wait_seconds(both, NOW) == 86400.0
    assert apollo_wait_seconds({"x-minute-requests-left": "3"}, NOW) is None


# Both -----------------------------------------------------------------------------------------


def test_unreachable_providers_are_unavailable() -> None:
    for adapter in (
        PdlCompanyEnrichment("http://localhost:9", Key("k"), timeout=1, clock=lambda: NOW),
        ApolloOrganizationEnrichment("http://localhost:9", Key("k"), timeout=1, clock=lambda: NOW),
    ):
        with pytest.raises(ProviderUnavailable, match="unreachable"):
            adapter.lookup("example.com")


def test_the_factory_builds_each_configured_provider_with_its_defaults() -> None:
    built = make_provider("pdl", Key("k"), clock=lambda: NOW)
    assert isinstance(built, PdlCompanyEnrichment)
    assert built.url("acme.co.uk").startswith("https://api.peopledatalabs.com/v5/company/enrich?")
    built = make_provider("apollo", Key("k"), clock=lambda: NOW, api_version="v1")
    assert isinstance(built, ApolloOrganizationEnrichment)
    assert built.url("acme.co.uk") == (
        "https://api.apollo.io/api/v1/organizations/enrich?domain=acme.co.uk"
    )
    with pytest.raises(ValueError, match="clearbit"):
        make_provider("clearbit", Key("k"), clock=lambda: NOW)


def test_handler_defaults_agree_with_the_stack_config_defaults() -> None:
    from handlers.common.api_versions import ENRICHMENT_APIS

    assert {name: (d.base_url, d.api_version) for name, d in DEFAULTS.items()} == {
        name: (api.base_url, api.version) for name, api in ENRICHMENT_APIS.items()
    }


def test_adapters_return_only_lead_fields() -> None:
    from handlers.lead_enricher.providers.apollo import organization_fields
    from handlers.lead_enricher.providers.pdl import company_fields

    assert set(company_fields(PDL_GOOGLE)) <= set(LEAD_FIELDS)
    assert set(organization_fields(APOLLO_ORG["organization"])) <= set(LEAD_FIELDS)
