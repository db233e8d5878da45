"""ler-dedupe: typed exact keys, deterministic fuzzy scoring, the model only in the band."""

from __future__ import annotations

import pytest

from handlers.common.strings import jaro_winkler
from handlers.lead_enricher.contract import DedupeSettings
from handlers.lead_enricher.deduping import Deduper
from handlers.lead_enricher.events import EventBridgeSink
from handlers.lead_enricher.lead import Contact, Enrichment, Lead
from handlers.lead_enricher.matching import (
    Profile,
    canonical_mailbox,
    company_of,
    company_token,
    exact_keys,
    fold,
    near_keys,
    score,
)
from tests.handlers.ler.conftest import IDENTITY, SOURCE, Ler
from testsupport.common import FakeBedrockClient

CONFIG = DedupeSettings(
    event_source=SOURCE,
    cache_table="dev-ler-enrich-cache",
    identity_table=IDENTITY,
    identity_index="by-crm-id",
    dedupe_model_id="haiku",
    daily_model_calls=23,
    link_score=0.9,
    ambiguous_score=0.7,
)


def test_jaro_winkler_matches_the_reference_values() -> None:
    assert jaro_winkler("martha", "marhta") == pytest.approx(0.9611, abs=1e-4)
    assert jaro_winkler("dwayne", "duane") == pytest.approx(0.84, abs=1e-2)
    assert jaro_winkler("dixon", "dicksonx") == pytest.approx(0.8133, abs=1e-4)
    assert jaro_winkler("abc", "xyz") == 0.0 and jaro_winkler("", "") == 0.0


def test_keys_are_typed_and_normalised() -> None:
    contact = Contact(
        email="jane.doe@acme-widgets.co.uk",
        phone="+447400123456",
        first_name="José",
        last_name="O'Neil",
        company="The Acme Widgets Co. Ltd",
    )
    assert exact_keys(contact) == [
        "EMAIL#jane.doe@acme-widgets.co.uk",
        "PHONE#+447400123456",
        "FP#joseoneil|acmewidgets",
    ]
    assert near_keys(contact) == ["NEAR#SC#oneil|acmewidgets", "NEAR#EC#janedoe@acme-widgets.co.uk"]
    assert fold("Zoë-Ann") == "zoeann" and company_token("ACME widgets, LLC") == "acmewidgets"
    assert canonical_mailbox("Jane.Doe+Leads@Acme.co.uk") == "janedoe@acme.co.uk"
    no_company = Contact(email="jane@acme-widgets.co.uk", first_name="Jane", last_name="Doe")
    assert company_of(no_company) == "acmewidgets"  # the business domain stands in
    enriched = Enrichment(status="enriched", fields={"company_name": {"value": "Acme Widgets PLC"}})
    assert company_of(Contact(email="jane@gmail.com"), enriched) == "acmewidgets"
    assert exact_keys(Contact(email="jane@gmail.com", first_name="Jane", last_name="Doe")) == [
        "EMAIL#jane@gmail.com"
    ]


def test_scores_rank_the_same_person_above_colleagues() -> None:
    jane = Profile("1", "Jane Doe", "acmewidgets", {"jane.doe@acme-widgets.co.uk"})
    same_mailbox = Profile(
        name="Jane A Doe", company="acmewidgets", emails={"janedoe+x@acme-widgets.co.uk"}
    )
    colleague = Profile(
        name="John Doe", company="acmewidgets", emails={"john.doe@acme-widgets.co.uk"}
    )
    stranger = Profile(name="Sam Smith", company="brightside", emails={"sam@brightside.co.uk"})
    assert score(same_mailbox, jane) >= 0.9
    assert 0.7 <= score(colleague, jane) < 0.9
    assert score(stranger, jane) < 0.3
    assert score(Profile(phones={"+447400123456"}), Profile(phones={"+447400123456"})) == 1.0


def lead(contact: Contact) -> Lead:
    return Lead(
        lead_id="f-9", lane="form", received_at="2026-11-28T10:00:00+00:00", contact=contact
    )


def seed_person(ler: Ler, crm_id: str, name: str, email: str, company: str = "acmewidgets") -> None:
    ler.seed_identity(f"EMAIL#{email}", crm_id, person_name=name, company_token=company)
    surname = fold(name.split()[-1])
    table = ler.clients["dynamodb"].Table(IDENTITY)
    table.update_item(
        Key={"id_key": f"NEAR#SC#{surname}|{company}"},
        UpdateExpression="ADD crm_ids :c",
        ExpressionAttributeValues={":c": {crm_id}},
    )
    table.update_item(
        Key={"id_key": f"NEAR#EC#{canonical_mailbox(email)}"},
        UpdateExpression="ADD crm_ids :c",
        ExpressionAttributeValues={":c": {crm_id}},
    )


def deduper(model: FakeBedrockClient) -> Deduper:
    return Deduper(CONFIG, sink=EventBridgeSink(SOURCE), model_client=model)


def test_no_identity_means_new_without_asking_the_model(ler: Ler) -> None:
    model = FakeBedrockClient()
    verdict = deduper(model).verdict(
        lead(Contact(email="new@person.co.uk", first_name="New", last_name="Person"))
    )
    assert verdict.verdict == "new" and model.calls == []


def test_exact_keys_link_strongest_first(ler: Ler) -> None:
    ler.seed_identity("PHONE#+447400123456", "c-phone")
    ler.seed_identity("EMAIL#jane@acme-widgets.co.uk", "c-email")
    verdict = deduper(FakeBedrockClient()).verdict(
        lead(Contact(email="jane@acme-widgets.co.uk", phone="+447400123456"))
    )
    assert (verdict.verdict, verdict.matched_on) == ("link:c-email", "EMAIL")


def test_a_near_match_above_the_link_score_links_without_the_model(ler: Ler) -> None:
    seed_person(ler, "c-1", "Jane Doe", "jane.doe@acme-widgets.co.uk")
    model = FakeBedrockClient()
    verdict = deduper(model).verdict(
        lead(Contact(email="janedoe+events@acme-widgets.co.uk", first_name="Jane", last_name="Doe"))
    )
    assert (verdict.verdict, verdict.matched_on) == ("link:c-1", "FUZZY")
    assert model.calls == []


def test_the_ambiguous_band_asks_the_model_and_keeps_a_valid_choice(ler: Ler) -> None:
    seed_person(ler, "c-1", "Jane Doe", "jane.doe@acme-widgets.co.uk")
    model = FakeBedrockClient([{"same_person_crm_id": "c-1", "confidence": "high"}])
    verdict = deduper(model).verdict(
        lead(
            Contact(
                email="jayne.doe@acme-widgets.co.uk",
                first_name="Jayne",
                last_name="Doe",
                company="Acme Widgets",
            )
        )
    )
    assert (verdict.verdict, verdict.matched_on, verdict.model) == ("link:c-1", "MODEL", "used")
    prompt = model.calls[0]["messages"][0]["content"][0]["text"]
    assert "id c-1" in prompt and "jane.doe@acme-widgets.co.uk" in prompt


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ({"same_person_crm_id": "c-999", "confidence": "high"}, "discarded:unknown_candidate"),
        ({"same_person_crm_id": "c-1", "confidence": "low"}, "discarded:low_confidence"),
        ({"same_person_crm_id": None, "confidence": "high"}, "used"),
        ({"confidence": "certain"}, "no_answer:schema_violation"),
    ],
)
def test_a_model_answer_outside_the_rules_means_new(
    ler: Ler, answer: dict[str, object], outcome: str
) -> None:
    seed_person(ler, "c-1", "Jane Doe", "jane.doe@acme-widgets.co.uk")
    model = FakeBedrockClient([answer])
    verdict = deduper(model).verdict(
        lead(
            Contact(
                email="jayne.doe@acme-widgets.co.uk",
                first_name="Jayne",
                last_name="Doe",
                company="Acme Widgets",
            )
        )
    )
    assert (verdict.verdict, verdict.model) == ("new", outcome)


def test_below_the_band_is_new_without_the_model(ler: Ler) -> None:
    seed_person(ler, "c-1", "Jane Doe", "jane.doe@acme-widgets.co.uk")
    model = FakeBedrockClient()
    verdict = deduper(model).verdict(
        lead(
            Contact(
                email="ed@gmail.com", first_name="Edward", last_name="Doe", company="Acme Widgets"
            )
        )
    )
    assert verdict.verdict == "new" and verdict.score is not None and verdict.score < 0.7
    assert model.calls == []


def test_the_handler_emits_le_deduped_with_the_verdict(ler: Ler) -> None:
    ler.seed_identity("EMAIL#jane@acme-widgets.co.uk", "c-7")
    event = {
        "detail-type": "le.enriched",
        "detail": lead(Contact(email="jane@acme-widgets.co.uk")).to_json(),
    }
    deduper(FakeBedrockClient()).handle(event)
    [emitted] = ler.emitted()
    assert emitted["detail-type"] == "le.deduped"
    assert emitted["detail"]["dedupe"]["verdict"] == "link:c-7"
