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


# A portal's required properties (HubSpot 2026-09) ---------------------------------------------
# "Breaking Change: CRM API Write Validation Enforcement Starting with the 2026-09 API Version"
# (https://developers.hubspot.com/changelog/crm-api-write-validation-enforcement): an admin's
# required properties (Create Record form, conditional rules) apply to API writes, answered
# 400 VALIDATION_ERROR. The shapes below are HubSpot's documented error bodies: the standard
# error with ``errors[].code`` and ``context.propertyName``; the per-property verdicts inside
# the message ("Enforcing Deal Currency Code Validation",
# https://developers.hubspot.com/changelog/deal-currenct-code-validation); and the required-
# properties message ("CRM Imports API - New validation for Required Properties",
# https://developers.hubspot.com/changelog/crm-imports-api-new-validation-for-required-properties).

REQUIRED_SHAPES = [
    (
        {
            "status": "error",
            "message": "Validation failed",
            "correlationId": "aeb5f871-7f07-4993-9211-075dc63e7cbf",
            "category": "VALIDATION_ERROR",
            "errors": [
                {
                    "message": "Required property 'lastname' is missing",
                    "code": "MISSING_REQUIRED_PROPERTY",
                    "context": {"propertyName": ["lastname"]},
                }
            ],
        },
        ("lastname",),
    ),
    (
        {
            "status": "error",
            "message": 'Property values were not valid: [{"isValid":false,"message":"Property '
            '\\"lead_source_detail\\" does not exist","error":"PROPERTY_DOESNT_EXIST",'
            '"name":"lead_source_detail"}]',
            "correlationId": "99a6fa94-58a7-4a8e-8bbb-60a59dbde414",
            "category": "VALIDATION_ERROR",
        },
        ("lead_source_detail",),
    ),
    (
        {
            "status": "error",
            "message": "Some required properties for CONTACT creates are missing: "
            "[One of [firstname, email, lastname]]",
            "correlationID": "123456-1234-1234-1234-123456789",
            "category": "VALIDATION_ERROR",
        },
        ("firstname", "email", "lastname"),
    ),
]


@pytest.mark.parametrize(("body", "named"), REQUIRED_SHAPES)
def test_a_required_property_refusal_is_a_crm_rejection_naming_it(
    stub: Stub, body: dict[str, Any], named: tuple[str, ...]
) -> None:
    from handlers.lead_enricher.crm import CrmRejected

    crm = HubSpotCrm(stub.url, Key("t"), wall=lambda: 0.0)
    stub.answer(400, body)
    with pytest.raises(CrmRejected) as caught:
        crm.create({"email": "x@y.example"})
    assert caught.value.properties == named
    assert not caught.value.retryable and len(stub.requests) == 1  # never repeated blindly
    stub.answer(400, body)
    with pytest.raises(CrmRejected):
        crm.update("501", {"city": "Leeds"})  # a conditional rule refuses an update the same way


def test_other_validation_errors_stay_plain_hubspot_errors(stub: Stub) -> None:
    """An invalid value is the lead's own problem, not the portal's: no rejection is claimed."""
    from handlers.lead_enricher.crm import CrmRejected

    crm = HubSpotCrm(stub.url, Key("t"), wall=lambda: 0.0)
    stub.answer(
        400,
        {
            "status": "error",
            "message": 'Property values were not valid: [{"isValid":false,"message":"Email '
            'address x@y is invalid","error":"INVALID_EMAIL","name":"email"}]',
            "category": "VALIDATION_ERROR",
        },
    )
    with pytest.raises(HubSpotError) as caught:
        crm.create({"email": "x@y"})
    assert not isinstance(caught.value, CrmRejected) and caught.value.status == 400


def test_archived_tells_a_restorable_delete_from_a_permanent_one(stub: Stub) -> None:
    """``crm_deletions``: ``GET`` with ``archived=true`` answers an archived contact only."""
    crm = HubSpotCrm(stub.url, lambda: "svc", wall=lambda: 0.0)
    stub.answer(200, {**contact("501"), "archived": True})
    stub.answer(404, {"status": "error", "message": "resource not found", "category": "OBJECT_NOT_FOUND"})
    assert crm.archived("501") is True and crm.archived("502") is False
    assert [(r["method"], r["path"].rsplit("/", 1)[-1], r["query"]) for r in stub.requests] == [
        ("GET", "501", {"archived": "true"}),
        ("GET", "502", {"archived": "true"}),
    ]
