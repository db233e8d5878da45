"""ler-push meets a contact HubSpot deleted: deleted for good (404, and 404 as archived), it
hands the contact to ler-backfill, which erases what ler holds about it, and the lead becomes a
new contact; merely archived (restorable), nothing is erased."""

from __future__ import annotations

import datetime as dt
import json
from types import SimpleNamespace
from typing import Any

import pytest

from handlers.common import aws_clients
from handlers.lead_enricher import crm_deletions
from handlers.lead_enricher.contract import PushSettings
from handlers.lead_enricher.functions import backfill
from handlers.lead_enricher.pushing import Pusher
from tests.handlers.ler.conftest import RECORDS, Clock, Ler, context
from tests.handlers.ler.test_ler_push import clean_lead
from testsupport.common import LambdaStub

NOW = dt.datetime(2026, 11, 28, 10, 0, tzinfo=dt.UTC)


@pytest.fixture
def lambdas(monkeypatch: pytest.MonkeyPatch) -> LambdaStub:
    stub = LambdaStub()
    # ler-push's Lambda client only; ler-backfill's run below uses the real (moto) ones.
    monkeypatch.setattr(crm_deletions, "aws_clients", SimpleNamespace(client=lambda service: stub))
    return stub


@pytest.fixture
def pusher(ler: Ler, lambdas: LambdaStub) -> Pusher:
    return Pusher(PushSettings.from_environ(), ler.crm, clock=Clock(NOW))


def _run_backfill(lambdas: LambdaStub) -> dict[str, Any]:
    """The asynchronous invocation ler-push made, run as Lambda would (real clients)."""
    (call,) = lambdas.invocations
    assert call["FunctionName"] == "dev-ler-backfill" and call["InvocationType"] == "Event"
    lambdas.invocations.clear()
    answer: dict[str, Any] = backfill.handler(json.loads(call["Payload"]), context("dev-ler-backfill"))
    return answer


def _versions(ler: Ler, key: str) -> list[str]:
    listed = ler.clients["s3"].list_object_versions(Bucket=RECORDS, Prefix=key)
    return [v["VersionId"] for v in listed.get("Versions", [])]


def test_a_contact_deleted_for_good_is_erased_and_the_lead_is_a_new_contact(
    ler: Ler, pusher: Pusher, lambdas: LambdaStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = pusher.push(clean_lead("f-1"))
    gone = str(first.crm_id)
    assert ler.identity("EMAIL#jane.doe@acme-widgets.co.uk")["crm_id"] == gone  # type: ignore[index]
    assert _versions(ler, "records/f-1.json")
    ler.crm.delete(gone, for_good=True)  # the owner's GDPR delete in HubSpot

    again = pusher.push(clean_lead("f-2", verdict=f"link:{gone}", pass_no=0))

    assert again.action == "created" and again.crm_id != gone
    monkeypatch.setattr(crm_deletions, "aws_clients", aws_clients)
    table = ler.clients["dynamodb"].Table("dev-ler-identity")
    before = {str(r["id_key"]) for r in table.scan()["Items"]}
    # Left for ler-backfill: f-1's record and claim, and the blocking rows (NEAR#, sets of ids)
    # naming the contact; its exact keys went at push, so the new contact's were written.
    assert _run_backfill(lambdas) == {"ler-records": 1, "ler-identity": 3}
    assert before - {str(r["id_key"]) for r in table.scan()["Items"]} == {
        "LEAD#f-1",
        "NEAR#EC#janedoe@acme-widgets.co.uk",
        "NEAR#SC#doe|acmewidgets",
    }
    assert _versions(ler, "records/f-1.json") == []  # every version of the old record
    assert ler.identity("LEAD#f-1") is None  # its claim named the contact
    for key in ("EMAIL#jane.doe@acme-widgets.co.uk", "PHONE#+447400123456"):
        row = ler.identity(key)
        assert row is not None and row["crm_id"] == again.crm_id  # the new contact's, only
    assert set(ler.objects(RECORDS, "records/")) == {"records/f-2.json"}


def test_an_archived_contact_can_come_back_so_nothing_is_erased(
    ler: Ler, pusher: Pusher, lambdas: LambdaStub
) -> None:
    first = pusher.push(clean_lead("f-1"))
    ler.crm.delete(str(first.crm_id), for_good=False)  # an ordinary delete: restorable 90 days
    pusher.push(clean_lead("f-2", verdict=f"link:{first.crm_id}"))
    assert lambdas.invocations == []
    assert _versions(ler, "records/f-1.json")
    assert ler.identity("EMAIL#jane.doe@acme-widgets.co.uk")["crm_id"] == first.crm_id  # type: ignore[index]
