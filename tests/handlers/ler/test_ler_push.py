"""ler-push: once per lead and pass, the live CRM as the backstop, fill only empty fields."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.lead_enricher.claims import LEASE_SECONDS, ClaimBusy, PushClaims
from handlers.lead_enricher.contract import PushSettings
from handlers.lead_enricher.crm_fields import crm_properties, fill_empty
from handlers.lead_enricher.functions import push
from handlers.lead_enricher.lead import Contact, Dedupe, Enrichment, Lead, Screening
from handlers.lead_enricher.pushing import Pusher
from tests.handlers.ler.conftest import IDENTITY, RECORDS, Clock, Ler, context

NOW = dt.datetime(2026, 11, 28, 10, 0, tzinfo=dt.UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)


@pytest.fixture
def pusher(ler: Ler, clock: Clock) -> Pusher:
    return Pusher(PushSettings.from_environ(), ler.crm, clock=clock)


def clean_lead(
    lead_id: str = "f-1",
    *,
    verdict: str = "new",
    pass_no: int = 0,
    enrichment: Enrichment | None = None,
    **contact: Any,
) -> Lead:
    person = {
        "email": "jane.doe@acme-widgets.co.uk",
        "phone": "+447400123456",
        "first_name": "Jane",
        "last_name": "Doe",
        "company": "Acme Widgets Ltd",
        **contact,
    }
    return Lead(
        lead_id=lead_id,
        lane="form",
        received_at=NOW.isoformat(),
        contact=Contact(**person),
        enrichment=enrichment or Enrichment(status="pending", domain="acme-widgets.co.uk"),
        dedupe=Dedupe(verdict=verdict),
        screening=Screening(decision="clean"),
        pass_no=pass_no,
    )


def creates(ler: Ler) -> int:
    return sum(1 for c in ler.crm.calls if c[0] == "create")


def test_a_new_lead_creates_one_contact_and_indexes_it(ler: Ler, pusher: Pusher) -> None:
    result = pusher.push(clean_lead())
    assert (result.action, creates(ler)) == ("created", 1)
    record = ler.objects(RECORDS, "records/")["records/f-1.json"]
    assert record["crm"] == {"crm_id": result.crm_id, "action": "created", "filled": []}
    for key in (
        "EMAIL#jane.doe@acme-widgets.co.uk",
        "PHONE#+447400123456",
        "FP#janedoe|acmewidgets",
    ):
        row = ler.identity(key)
        assert row is not None and (row["crm_id"], row["person_name"], row["source"]) == (
            result.crm_id,
            "Jane Doe",
            "form",
        )
    near = ler.identity("NEAR#SC#doe|acmewidgets")
    assert near is not None and near["crm_ids"] == {result.crm_id}
    claim = ler.identity("LEAD#f-1")
    assert claim is not None and (claim["status"], claim["crm_id_pushed"], claim["action"]) == (
        "done",
        result.crm_id,
        "created",
    )


def test_every_identity_row_push_writes_expires_identity_days_later(ler: Ler, pusher: Pusher) -> None:
    """Issue 42: ler-identity kept emails, phones and names without an end. Each row push
    writes (keys, blocking rows, the lead's claim) carries the TTL attribute, moved by each
    write, so only a contact no push or re-sync sees again expires."""
    days = PushSettings.from_environ().identity_days
    pusher.push(clean_lead())
    expected = int(NOW.timestamp()) + days * 86400
    for key in ("EMAIL#jane.doe@acme-widgets.co.uk", "NEAR#SC#doe|acmewidgets", "LEAD#f-1"):
        row = ler.identity(key)
        assert row is not None and int(row["expires_at"]) == expected, key


def test_the_same_event_twice_creates_once(ler: Ler, pusher: Pusher) -> None:
    event = {"detail-type": "le.clean", "detail": clean_lead().to_json()}
    registry.override(clock=pusher.clock)  # the handler's Pusher: the CRM is ler's fake
    first = push.handler(event, context())
    second = push.handler(event, context())
    assert first["action"] == "created" and second == {
        "lead_id": "f-1",
        "crm_id": None,
        "action": "duplicate",
    }
    assert len(ler.crm.calls) == 1


def test_a_delivery_while_another_is_pushing_is_told_to_retry(
    ler: Ler, pusher: Pusher, clock: Clock
) -> None:
    lead = clean_lead()
    claims = PushClaims(ler.clients["dynamodb"].Table(IDENTITY), 400)
    assert claims.claim(lead, NOW) is not None  # a first delivery is mid-way
    with pytest.raises(ClaimBusy):
        pusher.push(lead)
    assert ler.crm.calls == []
    clock.now = NOW + dt.timedelta(seconds=LEASE_SECONDS + 1)  # it crashed: the lease is stale
    assert pusher.push(lead).action == "created"


def test_a_crash_after_creating_is_healed_by_the_final_crm_check(
    ler: Ler, pusher: Pusher, clock: Clock
) -> None:
    lead = clean_lead()
    PushClaims(ler.clients["dynamodb"].Table(IDENTITY), 400).claim(lead, NOW)
    ler.crm.create({"email": "jane.doe@acme-widgets.co.uk", "firstname": "Jane"})  # then it died
    clock.now = NOW + dt.timedelta(seconds=LEASE_SECONDS + 1)
    result = pusher.push(lead)
    assert (result.action, creates(ler)) == ("linked", 1)


def test_a_later_pass_fills_in_and_an_older_duplicate_is_ignored(ler: Ler, pusher: Pusher) -> None:
    first = pusher.push(clean_lead())
    enriched = Enrichment(
        status="enriched",
        domain="acme-widgets.co.uk",
        fields={"employees": {"value": 40}, "company_city": {"value": "Leeds"}},
    )
    second = pusher.push(clean_lead(pass_no=1, verdict=f"link:{first.crm_id}", enrichment=enriched))
    assert (second.action, second.filled) == ("linked", ("city", "numberofemployees"))
    assert pusher.push(clean_lead()).action == "duplicate"  # pass 0 again, after pass 1
    assert pusher.push(clean_lead(pass_no=1, enrichment=enriched)).action == "duplicate"
    assert creates(ler) == 1


def test_a_linked_contact_gone_from_the_crm_falls_back_to_the_live_search(
    ler: Ler, clock: Clock
) -> None:
    handed: list[str] = []  # to ler-backfill, which erases it (test_ler_crm_deletions.py)
    pusher = Pusher(PushSettings.from_environ(), ler.crm, clock=clock, forget_contact=handed.append)
    existing = ler.crm.add(phone="+447400123456", firstname="Jane")
    result = pusher.push(
        clean_lead(verdict="link:deleted-123", email="jane.new@acme-widgets.co.uk")
    )
    assert (result.action, result.crm_id) == ("linked", existing.crm_id)  # found by phone
    assert creates(ler) == 0 and handed == ["deleted-123"]


def test_identity_keys_of_another_contact_are_not_repointed(ler: Ler, pusher: Pusher) -> None:
    ler.seed_identity("PHONE#+447400123456", "someone-else")
    result = pusher.push(clean_lead())
    assert (ler.identity("PHONE#+447400123456") or {})["crm_id"] == "someone-else"
    assert (ler.identity("EMAIL#jane.doe@acme-widgets.co.uk") or {})["crm_id"] == result.crm_id


def test_only_empty_fields_are_filled() -> None:
    wanted = crm_properties(clean_lead(job_title="Buyer"))
    existing = {
        "email": "jane.doe@acme-widgets.co.uk",
        "firstname": "Janet",
        "jobtitle": "  ",
        "phone": None,
    }
    assert fill_empty(existing, wanted) == {
        "lastname": "Doe",
        "phone": "+447400123456",
        "company": "Acme Widgets Ltd",
        "jobtitle": "Buyer",
        "website": "acme-widgets.co.uk",
    }


def test_a_lead_that_is_not_clean_is_refused(pusher: Pusher) -> None:
    junk = clean_lead()
    junk.screening = Screening(decision="junk", reason="spam")
    with pytest.raises(ValueError, match="not a clean"):
        pusher.push(junk)


def test_resync_rewrites_the_index_from_the_crm_export(ler: Ler, pusher: Pusher) -> None:
    survivor = ler.crm.add(
        email="jane@acme-widgets.co.uk", firstname="Jane", lastname="Doe", company="Acme Widgets"
    )
    ler.crm.add(email="bob@brightside.co.uk", mobilephone="07400 654321", firstname="Bob")
    survivor.properties["hs_merged_object_ids"] = "old-1;old-2"
    ler.seed_identity("EMAIL#jane.old@acme-widgets.co.uk", "old-1")
    ler.seed_identity("PHONE#+447400000001", "old-2")
    ler.seed_identity("EMAIL#jane@acme-widgets.co.uk", "stale-id")

    first = pusher.resync_page(None, limit=1)
    second = pusher.resync_page(first["next"], limit=1)
    assert (first["contacts"], second["contacts"], second["next"]) == (1, 1, None)
    assert first["repointed"] == 2
    for key in (
        "EMAIL#jane@acme-widgets.co.uk",
        "EMAIL#jane.old@acme-widgets.co.uk",
        "PHONE#+447400000001",
    ):
        assert (ler.identity(key) or {})["crm_id"] == survivor.crm_id, key
    assert (ler.identity("PHONE#+447400654321") or {})["source"] == "crm-export"
    assert ler.crm.calls == []  # a re-sync only reads the CRM
