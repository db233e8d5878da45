"""The CRM HTTP adapter (HubSpot CRM v3) against a local fake server.

The firmographic providers' contract tests are in ``test_ler_providers.py``.

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

from handlers.lead_enricher.crm import HubSpotCrm

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


def contact(crm_id: str, **properties: str | None) -> dict[str, Any]:
    return {"id": crm_id, "properties": properties, "archived": False}


def test_hubspot_search_get_update_and_page(server: FakeServer) -> None:
    token = Key("pat-eu1-123")
    crm = HubSpotCrm(server.url, token)
    server.answer(200, {"total": 1, "results": [contact("501", email="jane@acme-widgets.co.uk")]})
    found = crm.find_by_email("jane@acme-widgets.co.uk")
    assert found is not None and found.crm_id == "501"
    search = server.requests[-1]
    assert (search["method"], search["path"]) == ("POST", "/crm/v3/objects/contacts/search")
    assert search["body"]["filterGroups"][0]["filters"] == [
        {"propertyName": "email", "operator": "EQ", "value": "jane@acme-widgets.co.uk"}
    ]
    assert search["headers"]["authorization"] == "Bearer pat-eu1-123"

    server.answer(200, {"total": 0, "results": []})
    assert crm.find_by_phone("+447400123456") is None
    assert [
        g["filters"][0]["propertyName"] for g in server.requests[-1]["body"]["filterGroups"]
    ] == ["phone", "mobilephone"]

    server.answer(404, {"status": "error", "message": "resource not found"})
    assert crm.get("999") is None

    server.answer(200, contact("501", jobtitle="Buyer"))
    crm.update("501", {"jobtitle": "Buyer"})
    assert (
        server.requests[-1]["method"],
        server.requests[-1]["path"],
        server.requests[-1]["body"],
    ) == (
        "PATCH",
        "/crm/v3/objects/contacts/501",
        {"properties": {"jobtitle": "Buyer"}},
    )

    server.answer(
        200,
        {
            "results": [contact("501"), contact("502", hs_merged_object_ids="7;8")],
            "paging": {"next": {"after": "502"}},
        },
    )
    page, after = crm.page(None, 2)
    assert ([c.crm_id for c in page], after, page[1].merged_ids) == (
        ["501", "502"],
        "502",
        ["7", "8"],
    )
    server.answer(200, {"results": []})
    assert crm.page("502") == ([], None)
    assert "after=502" in server.requests[-1]["path"] and "limit=100" in server.requests[-1]["path"]
    assert token.reads == len(server.requests)


def test_hubspot_create_and_the_existing_contact_on_conflict(server: FakeServer) -> None:
    crm = HubSpotCrm(server.url, Key("t"))
    server.answer(201, contact("601", email="new@acme-widgets.co.uk"))
    made, created = crm.create({"email": "new@acme-widgets.co.uk", "lifecyclestage": "lead"})
    assert (made.crm_id, created) == ("601", True)
    assert server.requests[-1]["body"] == {
        "properties": {"email": "new@acme-widgets.co.uk", "lifecyclestage": "lead"}
    }

    server.answer(
        409,
        {
            "status": "error",
            "message": "Contact already exists. Existing ID: 601",
            "category": "CONFLICT",
        },
    )
    server.answer(200, contact("601", email="new@acme-widgets.co.uk", firstname="Ann"))
    existing, created = crm.create({"email": "new@acme-widgets.co.uk"})
    assert (existing.crm_id, created, existing.properties["firstname"]) == ("601", False, "Ann")
    assert server.requests[-1]["method"] == "GET" and server.requests[-1]["path"].startswith(
        "/crm/v3/objects/contacts/601?"
    )


def test_only_https_or_a_local_test_server_is_called() -> None:
    with pytest.raises(ValueError, match="https"):
        HubSpotCrm("http://api.hubapi.com", Key("t")).get("1")
