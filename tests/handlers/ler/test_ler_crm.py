"""ler's HubSpot adapter (the shared client) against a scripted local HubSpot.

Requests and answers follow HubSpot's documented date-based contacts API: search with OR-ed
filter groups ("Search the CRM"), the single-contact read with ``properties``, PATCH with a
``properties`` object, the list with ``paging.next.after``, and the 409 conflict whose
message carries ``Existing ID`` ("Create a contact",
https://developers.hubspot.com/docs/api-reference/2026-03/crm/objects/contacts/create-contact).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from handlers.common.hubspot import HubSpotClient, HubSpotError
from handlers.lead_enricher.crm import HubSpotCrm
from tests.handlers.common.hubspot_stub import Stub, running

V = "2026-09"


class Key:
    """Counts reads: the adapter must fetch the key at call time, every call."""

    def __init__(self, value: str) -> None:
        self.value = value
        self.reads = 0

    def __call__(self) -> str:
        self.reads += 1
        return self.value


@pytest.fixture
def stub() -> Iterator[Stub]:
    with running() as server:
        yield server


def contact(crm_id: str, **properties: str | None) -> dict[str, Any]:
    return {
        "id": crm_id,
        "properties": properties,
        "createdAt": "2026-05-01T10:00:00Z",
        "updatedAt": "2026-05-01T10:00:00Z",
        "archived": False,
    }


def test_search_get_update_and_page(stub: Stub) -> None:
    token = Key("svc-eu1-123")
    crm = HubSpotCrm(stub.url, token, wall=lambda: 0.0)
    stub.answer(200, {"total": 1, "results": [contact("501", email="jane@acme-widgets.co.uk")]})
    found = crm.find_by_email("jane@acme-widgets.co.uk")
    assert found is not None and found.crm_id == "501"
    search = stub.last
    assert (search["method"], search["path"]) == ("POST", f"/crm/objects/{V}/contacts/search")
    assert search["body"]["filterGroups"] == [
        {"filters": [{"propertyName": "email", "operator": "EQ", "value": "jane@acme-widgets.co.uk"}]},
        {
            "filters": [
                {
                    "propertyName": "hs_additional_emails",
                    "operator": "CONTAINS_TOKEN",
                    "value": "jane@acme-widgets.co.uk",
                }
            ]
        },
    ]
    assert search["headers"]["authorization"] == "Bearer svc-eu1-123"

    stub.answer(200, {"total": 0, "results": []})
    assert crm.find_by_phone("+447400123456") is None
    assert [g["filters"][0]["propertyName"] for g in stub.last["body"]["filterGroups"]] == [
        "phone",
        "mobilephone",
    ]

    stub.answer(404, {"status": "error", "message": "resource not found", "category": "OBJECT_NOT_FOUND"})
    assert crm.get("999") is None
    assert stub.last["path"] == f"/crm/objects/{V}/contacts/999"
    assert "hs_merged_object_ids" in stub.last["query"]["properties"].split(",")

    stub.answer(200, contact("501", jobtitle="Buyer"))
    crm.update("501", {"jobtitle": "Buyer"})
    assert (stub.last["method"], stub.last["path"], stub.last["body"]) == (
        "PATCH",
        f"/crm/objects/{V}/contacts/501",
        {"properties": {"jobtitle": "Buyer"}},
    )

    stub.answer(
        200,
        {
            "results": [contact("501"), contact("502", hs_merged_object_ids="7;8")],
            "paging": {"next": {"after": "502", "link": "?after=502"}},
        },
    )
    page, after = crm.page(None, 2)
    assert ([c.crm_id for c in page], after, page[1].merged_ids) == (["501", "502"], "502", ["7", "8"])
    stub.answer(200, {"results": []})
    assert crm.page("502") == ([], None)
    assert stub.last["query"]["after"] == "502" and stub.last["query"]["limit"] == "100"
    assert token.reads == len(stub.requests)


def test_create_and_the_existing_contact_on_conflict(stub: Stub) -> None:
    crm = HubSpotCrm(stub.url, Key("t"), wall=lambda: 0.0)
    stub.answer(201, contact("601", email="new@acme-widgets.co.uk"))
    made, created = crm.create({"email": "new@acme-widgets.co.uk", "lifecyclestage": "lead"})
    assert (made.crm_id, created) == ("601", True)
    assert stub.last["body"] == {"properties": {"email": "new@acme-widgets.co.uk", "lifecyclestage": "lead"}}
    assert stub.last["path"] == f"/crm/objects/{V}/contacts"

    stub.answer(
        409,
        {
            "status": "error",
            "message": "Contact already exists. Existing ID: 601",
            "correlationId": "0a1b2c3d-0000-4000-8000-000000000001",
            "category": "CONFLICT",
        },
    )
    stub.answer(200, contact("601", email="new@acme-widgets.co.uk", firstname="Ann"))
    existing, created = crm.create({"email": "new@acme-widgets.co.uk"})
    assert (existing.crm_id, created, existing.properties["firstname"]) == ("601", False, "Ann")
    assert (stub.last["method"], stub.last["path"]) == ("GET", f"/crm/objects/{V}/contacts/601")


def test_a_throttled_search_is_retried_after_retry_after(stub: Stub) -> None:
    sleeps: list[float] = []
    client = HubSpotClient(Key("t"), base_url=stub.url, sleep=sleeps.append, wall=lambda: 0.0)
    crm = HubSpotCrm(stub.url, Key("t"), client=client, wall=lambda: 0.0)
    stub.answer(429, {"status": "error", "errorType": "RATE_LIMIT", "policyName": "SECONDLY"}, Retry_After="1")
    stub.answer(200, {"total": 0, "results": []})
    assert crm.find_by_email("a@b.example") is None
    assert sleeps == [1.0] and len(stub.requests) == 2


def test_a_failed_create_is_not_repeated(stub: Stub) -> None:
    crm = HubSpotCrm(stub.url, Key("t"), wall=lambda: 0.0)
    stub.answer(500, {"status": "error", "message": "internal error"})
    with pytest.raises(HubSpotError) as caught:
        crm.create({"email": "x@y.example"})
    assert caught.value.retryable and len(stub.requests) == 1  # the queue redelivers; 409 heals


def test_the_version_comes_from_the_stack() -> None:
    crm = HubSpotCrm("https://api.hubapi.com", Key("t"), version="2026-03", wall=lambda: 0.0)
    assert crm.client.crm_path("objects", "contacts") == "/crm/objects/2026-03/contacts"
