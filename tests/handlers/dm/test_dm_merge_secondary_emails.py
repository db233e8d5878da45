"""The legacy secondary-email step cannot sink a merge (issue #27, finding 7 of the round).

``/contacts/v1/secondary-email/...`` is the one call dm makes with no date-based version, and
HubSpot documents nothing about Service Keys on legacy paths. Replayed here from HubSpot's
reference: the documented 200 answers of ``PUT`` (add) and ``DELETE`` (remove),
https://developers.hubspot.com/docs/api-reference/legacy/crm/objects/contacts/v1/put-contacts-v1-secondary-email-vid-email-email
and .../get-contacts-v1-secondary-email-vid-email-email (the DELETE page), and HubSpot's common
error body (``status``, ``message``, ``category``, ``correlationId``),
https://developers.hubspot.com/docs/faq/api-error-responses. A refusal (401, 403, or a 5xx left
after the retries) is recorded in the merge record and the undo bundle, counted and reported,
and the merge goes on; an undo skips the addresses that were never added.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import time
from collections.abc import Iterator
from decimal import Decimal

import pytest

from handlers.common import metrics
from handlers.common.entry import registry
from handlers.duplicate_merger.crm import CrmError, HubSpotCrm
from handlers.duplicate_merger.functions import merge
from handlers.duplicate_merger.store import S3Bundles
from tests.handlers.common.hubspot_stub import Stub, running
from tests.handlers.dm.conftest import DmAws
from tests.handlers.dm.flows import NOW, at, crm_with_history, last_mail, service
from testsupport.metrics import count_metrics

DOCUMENTED_PUT = {"portalId": 589323, "vid": 21316, "secondaryEmails": ["updatedAddress@hubspot.com", "newlyDiscoveredAddress@hubspot.com"]}
DOCUMENTED_DELETE = {"portalId": 589323, "vid": 21316, "secondaryEmails": ["newlyDiscoveredAddress@hubspot.com"]}
REFUSALS = {
    401: {"status": "error", "message": "Authentication credentials not found.", "category": "INVALID_AUTHENTICATION", "correlationId": "a1b2c3d4-e5f6-7890-abcd-ef1234567890"},
    403: {"status": "error", "message": "This app hasn't been granted all required scopes to make this call.", "category": "MISSING_SCOPES", "correlationId": "a43683b0-5717-4ceb-80b4-104d02915d8c"},
}


@pytest.fixture
def stub() -> Iterator[Stub]:
    with running() as server:
        yield server


def test_the_documented_v1_answers_are_understood(stub: Stub) -> None:
    crm = HubSpotCrm("svc", stub.url, wall=time.time)
    stub.answer(200, DOCUMENTED_PUT)
    crm.add_email("21316", "newlyDiscoveredAddress@hubspot.com")
    assert (stub.last["method"], stub.last["path"]) == (
        "PUT",
        "/contacts/v1/secondary-email/21316/email/newlyDiscoveredAddress%40hubspot.com",
    )
    stub.answer(200, DOCUMENTED_DELETE)
    crm.remove_email("21316", "updatedAddress@hubspot.com")
    assert stub.last["method"] == "DELETE"


@pytest.mark.parametrize("status", sorted(REFUSALS))
def test_a_refusal_of_the_legacy_path_is_a_crm_error_naming_it(stub: Stub, status: int) -> None:
    crm = HubSpotCrm("svc", stub.url, wall=time.time)
    stub.answer(status, REFUSALS[status])
    with pytest.raises(CrmError) as refused:
        crm.add_email("21316", "ann@z.net")
    assert refused.value.status == status


@pytest.mark.parametrize("status", [401, 403, 502])
def test_a_refused_secondary_email_is_recorded_and_the_merge_goes_on(
    dm_aws: DmAws, capsys: pytest.CaptureFixture[str], status: int
, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found on a1a1316: the refusal rolled the whole merge back (every merge moving an address)."""
    # The dev stack runs without business metrics (businessMetrics: false); prod counts this.
    count_metrics(monkeypatch)
    crm = crm_with_history()
    before = copy.deepcopy(crm.state(["101", "102"]))

    def refuse(contact_id: str, email: str) -> None:
        raise CrmError(f"HTTP {status}", status=status, retryable=status >= 500)

    crm.add_email = refuse  # type: ignore[method-assign]
    capsys.readouterr()
    outcome = service(dm_aws, crm).merge("101#102", decided_by="automatic", now=NOW)
    assert outcome.status == "merged"
    assert "102" not in crm.contacts or crm.contacts["102"].get("archived")
    assert outcome.details["emails_not_added"] == ["ann@zyborski.net", "ann.z@old.example"]

    record = dm_aws.merges.get_item(Key={"merge_id": outcome.merge_id})["Item"]
    assert record["state"] == "merged"
    assert [f["email"] for f in record["email_failures"]] == ["ann@zyborski.net", "ann.z@old.example"]
    assert all(str(status) in f["error"] for f in record["email_failures"])
    bundle = json.loads(S3Bundles(dm_aws.bucket).get(str(record["bundle_key"])))
    assert [f["email"] for f in bundle["email_failures"]] == ["ann@zyborski.net", "ann.z@old.example"]
    counted = [
        value
        for line in capsys.readouterr().out.splitlines()
        for (_ns, name, value, _dims) in metrics.emf_metrics(line)
        if name == "SecondaryEmailsNotAdded"
    ]
    assert counted == [2]

    # The undo does not trip over the addresses that were never added.
    del crm.add_email  # the CRM answers again: the instance's refusal goes
    undone = service(dm_aws, crm).undo(str(outcome.merge_id), undone_by="ops@example.com", now=NOW)
    assert undone.status == "undone"
    assert crm.state(["101", "102"]) == before


def test_the_next_digest_names_both_contacts_and_says_how_to_add_the_refused_address(
    dm_aws: DmAws,
) -> None:
    """Found on ae6d6c4: the refusal was recorded and counted, but the owner never heard of it
    (the digest listed the merge with no word about the address)."""
    crm = crm_with_history()

    def refuse(contact_id: str, email: str) -> None:
        raise CrmError("HTTP 403", status=403, retryable=False)

    crm.add_email = refuse  # type: ignore[method-assign]
    names = {"low": {"name": "Ann Zyborski"}, "high": {"name": "Annie Zyborski"}}
    dm_aws.pairs.put_item(Item={"pair_key": "101#102", "band": "automatic", "run_id": "2026-W32",
                                "review": "2026-W32#automatic", "score": Decimal("15"), "contacts": names})
    dm_aws.pairs.put_item(Item={"pair_key": "run#latest", "run_id": "2026-W32"})
    registry.override(merge, crm=lambda: crm)
    at(NOW)
    body = json.dumps({"pair_key": "101#102", "run": "2026-W32", "score": 15.0})
    assert merge.handler({"Records": [{"messageId": "m1", "body": body}]}, None) == {"batchItemFailures": []}
    at(NOW + dt.timedelta(days=6))
    assert merge.handler({"action": "digest"}, None)["sent"] is True
    mail = last_mail()
    assert "1 to look at" in mail
    assert ("Ann Zyborski and Annie Zyborski were merged (Annie Zyborski into Ann Zyborski), but "
            "HubSpot refused to keep ann@zyborski.net, ann.z@old.example on Ann Zyborski") in mail
    assert ("In HubSpot, open Ann Zyborski and add ann@zyborski.net, ann.z@old.example as a "
            "secondary email") in mail
