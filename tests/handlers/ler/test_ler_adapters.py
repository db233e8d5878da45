"""The firmographic provider's HTTP adapter against a local fake server (HubSpot: test_ler_crm.py).

The server runs on 127.0.0.1 in the test process: no network. It records each request and
answers from a script, so the tests check the exact calls the adapters make and how they read
each answer (a 409 with the existing id, a 404, throttling, an outage).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from handlers.lead_enricher.firmographics import HttpFirmographics, ProviderUnavailable

Answer = tuple[int, Any]


@dataclass
class FakeServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)

    def answer(self, status: int, body: Any = None) -> None:
        self.answers.append((status, body))


@pytest.fixture
def server() -> Iterator[FakeServer]:
    state = FakeServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            state.requests.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": json.loads(body) if body else None,
                }
            )
            status, payload = (
                state.answers.pop(0) if state.answers else (500, {"message": "unscripted"})
            )
            data = b"" if payload is None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _serve

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://localhost:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


class Key:
    """Counts reads: the adapters must fetch the key at call time, every call."""

    def __init__(self, value: str) -> None:
        self.value = value
        self.reads = 0

    def __call__(self) -> str:
        self.reads += 1
        return self.value


CLEARBIT = {
    "name": "Acme Widgets",
    "domain": "acme-widgets.co.uk",
    "category": {"industry": "Machinery", "sector": "Industrials"},
    "metrics": {"employees": 40, "employeesRange": "11-50", "estimatedAnnualRevenue": "$1M-$10M"},
    "geo": {"city": "Leeds", "countryCode": "GB"},
    "foundedYear": 1999,
    "linkedin": {"handle": "company/acme-widgets"},
}


def test_the_provider_maps_a_profile_and_reads_its_key_each_call(server: FakeServer) -> None:
    key = Key("sk_live_1")
    provider = HttpFirmographics(server.url, key)
    server.answer(200, CLEARBIT)
    assert provider.lookup("acme-widgets.co.uk") == {
        "company_name": "Acme Widgets",
        "industry": "Machinery",
        "employees": 40,
        "employees_range": "11-50",
        "annual_revenue_range": "$1M-$10M",
        "company_country": "GB",
        "company_city": "Leeds",
        "founded_year": 1999,
        "linkedin": "https://www.linkedin.com/company/acme-widgets",
    }
    [request] = server.requests
    assert request["path"] == "/v2/companies/find?domain=acme-widgets.co.uk"
    assert request["headers"]["authorization"] == "Bearer sk_live_1"
    server.answer(404, {"error": {"type": "unknown_record"}})
    key.value = "sk_live_2"  # rotated: the next call uses it without a redeploy
    assert provider.lookup("nobody.example") is None
    assert key.reads == 2 and server.requests[1]["headers"]["authorization"] == "Bearer sk_live_2"


@pytest.mark.parametrize(
    ("status", "body"), [(429, {"error": "rate"}), (503, None), (202, {"queued": True}), (401, {})]
)
def test_provider_failures_are_unavailable_not_unknown(
    server: FakeServer, status: int, body: Any
) -> None:
    server.answer(status, body)
    with pytest.raises(ProviderUnavailable):
        HttpFirmographics(server.url, Key("k")).lookup("acme-widgets.co.uk")


def test_an_unreachable_provider_is_unavailable() -> None:
    with pytest.raises(ProviderUnavailable, match="unreachable"):
        HttpFirmographics("http://localhost:9", Key("k"), timeout=1).lookup("acme-widgets.co.uk")
