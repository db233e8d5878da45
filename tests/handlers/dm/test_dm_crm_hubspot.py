"""dm's HubSpot adapter against a scripted local HubSpot: the documented requests of a merge.

Shapes replayed from HubSpot's date-based API reference: batch read of contacts, the
associations batch read (``results[].to[].associationTypes[]`` with ``category``, ``typeId``,
``label``; ``paging.next.after`` per input), labelled batch create (``types`` with
``associationCategory`` and ``associationTypeId``), batch label archive, and the legacy
secondary-email endpoints (``PUT``/``DELETE /contacts/v1/secondary-email/{vid}/email/{email}``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest

from handlers.common.secrets import default_cache
from handlers.duplicate_merger.crm import (
    ASSOCIATED_TYPES,
    Association,
    CrmError,
    HubSpotCrm,
    hubspot,
)
from tests.handlers.common.hubspot_stub import Stub, running

V = "2026-09"


@pytest.fixture
def stub() -> Iterator[Stub]:
    with running() as server:
        yield server


def links(contact_id: str, *to: tuple[str, int, str | None], after: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "from": {"id": contact_id},
        "to": [
            {
                "toObjectId": to_id,
                "associationTypes": [{"category": "HUBSPOT_DEFINED", "typeId": type_id, "label": label}],
            }
            for to_id, type_id, label in to
        ],
    }
    if after:
        result["paging"] = {"next": {"after": after, "link": None}}
    return {"status": "COMPLETE", "results": [result], "startedAt": "2026-11-30T10:00:00Z", "completedAt": "2026-11-30T10:00:01Z"}


def test_a_snapshot_reads_every_association_type_with_paging(stub: Stub) -> None:
    crm = HubSpotCrm("svc", stub.url, wall=lambda: 0.0)
    stub.answer(
        200,
        {"results": [
            {"name": "email", "calculated": False},
            {"name": "hs_additional_emails", "calculated": False, "modificationMetadata": {"readOnlyValue": True}},
            {"name": "hs_lead_status", "calculated": False, "modificationMetadata": {"readOnlyValue": False}},
            {"name": "num_notes", "calculated": True},
        ]},
    )
    stub.answer(200, {"status": "COMPLETE", "results": [{"id": "102", "properties": {"email": "ann@z.net"}}]})
    for kind in ASSOCIATED_TYPES:
        if kind == "companies":
            stub.answer(200, links("102", ("c1", 279, None), ("c1", 1, "Primary")))
        elif kind == "notes":
            stub.answer(200, links("102", ("n1", 201, None), after="MTAw"))
            stub.answer(200, links("102", ("n2", 201, None)))
        else:
            stub.answer(207, {"status": "COMPLETE", "results": [], "numErrors": 1, "errors": [
                {"status": "error", "category": "OBJECT_NOT_FOUND", "message": "No associations found"}]})
    snap = crm.snapshot("102")
    assert snap is not None and snap.properties == {"email": "ann@z.net"}
    assert set(snap.associations) == {
        Association("companies", "c1", 279),
        Association("companies", "c1", 1),
        Association("notes", "n1", 201),
        Association("notes", "n2", 201),
    }
    read = stub.requests[1]
    assert (read["method"], read["path"]) == ("POST", f"/crm/objects/{V}/contacts/batch/read")
    assert read["body"]["properties"] == ["email", "hs_additional_emails", "hs_lead_status"]
    paths = [r["path"] for r in stub.requests[2:]]
    assert f"/crm/associations/{V}/contacts/notes/batch/read" in paths
    assert {p.split("/")[5] for p in paths} == set(ASSOCIATED_TYPES)
    second_page = [r for r in stub.requests if r["body"] == {"inputs": [{"id": "102", "after": "MTAw"}]}]
    assert len(second_page) == 1


def test_moving_writes_labelled_batches_and_archives_labels_unlabeled_last(stub: Stub) -> None:
    crm = HubSpotCrm("svc", stub.url, wall=lambda: 0.0)
    moved = [
        Association("companies", "c1", 279),
        Association("companies", "c1", 1, label="Primary"),
        Association("notes", "n1", 201),
    ]
    for _ in range(4):
        stub.answer(201, {"status": "COMPLETE", "results": []})
    crm.associate_all("101", moved)
    create = [r for r in stub.requests if r["path"].endswith("/batch/create")]
    assert [r["path"] for r in create] == [
        f"/crm/associations/{V}/contacts/companies/batch/create",
        f"/crm/associations/{V}/contacts/notes/batch/create",
    ]
    assert create[0]["body"] == {"inputs": [{
        "from": {"id": "101"},
        "to": {"id": "c1"},
        "types": [
            {"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 279},
            {"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 1},
        ],
    }]}
    stub.requests.clear()
    crm.dissociate_all("102", moved)
    assert stub.requests[0]["path"] == f"/crm/associations/{V}/contacts/companies/batch/labels/archive"
    assert [t["associationTypeId"] for t in stub.requests[0]["body"]["inputs"][0]["types"]] == [1, 279]


def test_a_custom_label_without_a_type_id_is_refused_not_guessed(stub: Stub) -> None:
    legacy = Association.from_item({"type": "contacts", "id": "900", "label": "referred_by"})
    assert legacy.type_id == 0
    with pytest.raises(CrmError, match="no HubSpot type id"):
        HubSpotCrm("svc", stub.url, wall=lambda: 0.0).associate_all("101", [legacy])
    assert stub.requests == []
    assert Association.from_item({"type": "deals", "id": "d1", "label": "contact_to_deal"}).type_id == 4


def test_secondary_emails_are_added_and_removed(stub: Stub) -> None:
    crm = HubSpotCrm("svc", stub.url, wall=lambda: 0.0)
    stub.answer(200, {"portalId": 62515, "vid": 101, "secondaryEmails": ["ann@z.net"]})
    crm.add_email("101", "ann@z.net")
    assert (stub.last["method"], stub.last["path"]) == ("PUT", "/contacts/v1/secondary-email/101/email/ann%40z.net")
    stub.answer(404, {"status": "error", "message": "not found"})
    crm.remove_email("101", "ann@z.net")  # already gone: done
    assert stub.last["method"] == "DELETE"


def test_archive_and_a_throttled_write(stub: Stub) -> None:
    sleeps: list[float] = []
    crm = HubSpotCrm("svc", stub.url, sleep=sleeps.append, wall=lambda: 0.0)
    stub.answer(429, {"status": "error", "errorType": "RATE_LIMIT", "policyName": "SECONDLY"}, Retry_After="2")
    stub.answer(204)
    crm.archive("102")
    assert sleeps == [2.0] and stub.last["path"] == f"/crm/objects/{V}/contacts/102"
    stub.answer(400, {"status": "error", "message": "bad", "category": "VALIDATION_ERROR"})
    with pytest.raises(CrmError) as caught:
        crm.set_properties("101", {"city": "Boston", "hs_lead_status": "NEW"})
    assert caught.value.status == 400 and stub.last["body"] == {"properties": {"city": "Boston"}}


def test_the_reader_pages_with_after(stub: Stub) -> None:
    crm = HubSpotCrm("svc", stub.url, version="2026-03", wall=lambda: 0.0)
    stub.answer(200, {"results": [{"id": "1", "properties": {"email": "a@b.example"}}],
                      "paging": {"next": {"after": "2"}}})
    stub.answer(200, {"results": [{"id": "2", "properties": {}}]})
    assert [cid for cid, _ in crm.iter_contacts()] == ["1", "2"]
    assert stub.requests[0]["path"] == "/crm/objects/2026-03/contacts"
    assert stub.requests[1]["query"]["after"] == "2" and stub.requests[1]["query"]["archived"] == "false"


def test_dm_functions_reach_hubspot_with_their_own_secret_forgotten_on_a_401(
    stub: Stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``crm.hubspot``, dm-block's and dm-merge's one factory: the Service Key is read from the
    secret it is given at call time; a 401 drops that secret from the cache and the request is
    sent once more with the key read again: HubSpot's service keys "can be managed or rotated"
    (HubSpot, "Account service keys",
    https://developers.hubspot.com/docs/apps/developer-platform/build-apps/authentication/account-service-keys),
    and a rotated key needs no redeploy."""
    read: list[str] = []
    dropped: list[str | None] = []
    keys = iter(["old-key", '{"token": "new-key"}'])

    def get_string(secret: str) -> str:
        read.append(secret)
        return next(keys)

    monkeypatch.setattr(default_cache, "get_string", get_string)
    monkeypatch.setattr(default_cache, "invalidate", lambda secret=None: dropped.append(secret))
    crm = hubspot("/dev/dm-crm-read", stub.url, V, lambda: dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    stub.answer(401, {"message": "Authentication credentials not found."})
    stub.answer(200, {"results": [{"id": "7", "properties": {"email": "ann@z.net"}}]})
    assert crm.page(None) == ([("7", {"email": "ann@z.net"})], None)
    assert read == ["/dev/dm-crm-read", "/dev/dm-crm-read"]
    assert dropped == ["/dev/dm-crm-read"]
    assert [r["headers"]["authorization"] for r in stub.requests] == [
        "Bearer old-key",
        "Bearer new-key",
    ]
    # dm-block's reader stops before a rate-limit wait would pass its invocation's deadline
    assert hubspot("s", stub.url, V, lambda: dt.datetime.now(dt.UTC), deadline=12.5).client.deadline == 12.5


def test_known_asks_for_live_then_archived_contacts(stub: Stub) -> None:
    """``deletions``: an id HubSpot answers neither live nor with ``archived=true`` is deleted
    for good; a batch it knows none of is a 207 with errors, or a 404."""
    crm = HubSpotCrm("svc", stub.url, wall=lambda: 0.0)
    stub.answer(207, {"status": "COMPLETE", "results": [{"id": "7", "properties": {}}], "numErrors": 1,
                      "errors": [{"status": "error", "category": "OBJECT_NOT_FOUND", "message": "not found"}]})
    stub.answer(404, {"status": "error", "category": "OBJECT_NOT_FOUND", "message": "not found"})
    assert crm.known(["7", "8"]) == {"7"}
    live, archived = stub.requests
    assert (live["method"], live["path"]) == ("POST", f"/crm/objects/{V}/contacts/batch/read")
    assert (live["query"]["archived"], archived["query"]["archived"]) == ("false", "true")
    assert archived["body"]["inputs"] == [{"id": "7"}, {"id": "8"}]
