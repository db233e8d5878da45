"""ler-normalize: the deterministic rules, the model only when ambiguous, its answer bounded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handlers.lead_enricher.cleanup import clean, clean_domain, clean_email, phone_e164, split_name
from handlers.lead_enricher.countries import country_code
from handlers.lead_enricher.events import EventBridgeSink
from handlers.lead_enricher.functions import normalize
from handlers.lead_enricher.intake_queue import message
from handlers.lead_enricher.lead import Lead
from handlers.lead_enricher.normalize_model import FieldResolution, apply
from handlers.lead_enricher.normalizing import normalize_lead
from tests.handlers.ler.conftest import RECORDS, Ler, context, sqs_event
from testsupport.common import FakeBedrockClient


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (" Jane.Doe@Acme-Widgets.CO.UK ", "jane.doe@acme-widgets.co.uk"),
        ("mailto:<ops@example.org>", "ops@example.org"),
        ("jane@@acme.co.uk", None),
        ("jane.@acme.co.uk", None),
        ("jane@acme", None),
        ("jane doe@acme.co.uk", None),
    ],
)
def test_email_is_lowercased_and_validated(given: str, expected: str | None) -> None:
    assert clean_email(given) == expected


@pytest.mark.parametrize(
    ("given", "region", "expected"),
    [
        ("07400 123456", "GB", "+447400123456"),
        ("+44 (0)20 7946 0018", "GB", "+442079460018"),
        ("0044 161 496 0000", "GB", "+441614960000"),
        ("(415) 555-2671", "US", "+14155552671"),
        ("(415) 555-2671", "GB", None),
        ("12345", "GB", None),
    ],
)
def test_phone_becomes_e164_with_phonenumbers(
    given: str, region: str, expected: str | None
) -> None:
    assert phone_e164(given, region) == expected


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("jane doe", ("Jane", "Doe", False)),
        ("DOE, JANE", ("Jane", "Doe", False)),
        ("Dr. jane van der berg", ("Jane", "van der Berg", False)),
        ("mary o'neil-mcdonald", ("Mary", "O'Neil-McDonald", False)),
        ("Mary-Kate DeVries", ("Mary-Kate", "DeVries", False)),
        ("Jane Doe - Acme Widgets Ltd", ("Jane", "Doe", True)),
        ("Jane Doe Acme Widgets Ltd", ("Jane", "Doe Acme Widgets Ltd", True)),
        ("jane123", (None, None, False)),
    ],
)
def test_names_are_split_and_cased(
    given: str, expected: tuple[str | None, str | None, bool]
) -> None:
    assert split_name(given) == expected


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("uk", "GB"),
        ("England", "GB"),
        ("U.S.A.", "US"),
        ("Deutschland", "DE"),
        ("fr", "FR"),
        ("Narnia", None),
        ("XX", None),
    ],
)
def test_countries_become_iso_codes(given: str, expected: str | None) -> None:
    assert country_code(given) == expected


def test_website_becomes_a_bare_domain() -> None:
    assert clean_domain("https://www.Acme-Widgets.co.uk/contact?x=1") == "acme-widgets.co.uk"
    assert clean_domain("not a site") is None


def test_the_phone_is_read_in_the_leads_country_and_the_country_inferred_from_it() -> None:
    us = clean({"phone": "(415) 555-2671", "country": "United States"}, default_region="GB")
    assert (us.contact.phone, us.contact.country, us.ambiguous) == ("+14155552671", "US", {})
    inferred = clean({"phone": "+1 415 555 2671"}, default_region="GB")
    assert inferred.contact.country == "US" and "country_from_phone" in inferred.flags
    ambiguous = clean({"phone": "(415) 555-2671"}, default_region="GB")
    assert ambiguous.contact.phone is None and ambiguous.ambiguous == {"phone": "(415) 555-2671"}
    invalid = clean({"phone": "+44 12", "email": "nope"}, default_region="GB")
    assert invalid.flags == ["email_invalid", "phone_invalid"]


def lead(**fields: str) -> Lead:
    return Lead(lead_id="f-1", lane="form", received_at="2026-11-28T10:00:00+00:00", fields=fields)


def test_a_clean_lead_never_calls_the_model() -> None:
    model = FakeBedrockClient()  # any call would fail: nothing is scripted
    done = normalize_lead(
        lead(email="JANE@ACME-WIDGETS.CO.UK", name="jane doe", phone="07400 123456"),
        default_region="GB",
        model_id="m",
        client=model,
    )
    assert model.calls == [] and done.normalize["model"] is None
    assert done.contact is not None and done.contact.full_name == "Jane Doe"


def test_the_model_sees_only_the_ambiguous_fields_and_its_valid_answer_is_kept() -> None:
    model = FakeBedrockClient(
        [
            {
                "first_name": "Jane",
                "last_name": "Doe",
                "company": "Acme Widgets Ltd",
                "phone_region": "us",
            }
        ]
    )
    done = normalize_lead(
        lead(email="jane@gmail.com", name="Jane Doe - Acme Widgets Ltd", phone="(415) 555-2671"),
        default_region="GB",
        model_id="haiku",
        client=model,
    )
    [call] = model.calls
    prompt = call["messages"][0]["content"][0]["text"]
    assert "name: 'Jane Doe - Acme Widgets Ltd'" in prompt and "phone: '(415) 555-2671'" in prompt
    assert "jane@gmail.com" not in prompt  # only the domain is context
    assert call["modelId"] == "haiku"
    contact = done.contact
    assert contact is not None
    assert (contact.first_name, contact.last_name, contact.company) == (
        "Jane",
        "Doe",
        "Acme Widgets Ltd",
    )
    assert (contact.phone, contact.country) == ("+14155552671", "US")
    assert done.normalize["model"] == "used" and sorted(done.normalize["accepted"]) == [
        "name",
        "phone",
    ]


@pytest.mark.parametrize(
    ("answer", "field", "why"),
    [
        ({"first_name": "Janet", "last_name": "Doe"}, "name", "not in the input"),
        ({"first_name": None, "last_name": "Doe"}, "name", "no first name"),
        ({"phone_region": "FR"}, "phone", "valid number"),
        ({"phone_region": "ZZ"}, "phone", "valid number"),
        ({"country_code": "Britain"}, "country", "ISO alpha-2"),
        ({"country_code": "DE"}, "country", "disagrees"),
    ],
)
def test_an_answer_outside_the_rules_is_discarded(
    answer: dict[str, Any], field: str, why: str
) -> None:
    cleanup = clean(
        {"name": "Jane Doe - Acme", "phone": "(415) 555-2671", "country": "the States"}
        if field != "country"
        else {"phone": "+1 415 555 2671", "country": "the States"},
        default_region="GB",
    )
    before = (cleanup.contact.first_name, cleanup.contact.last_name, cleanup.contact.phone)
    resolution = apply(cleanup, FieldResolution(**answer))
    assert field in resolution.discarded and why in resolution.discarded[field]
    assert field not in resolution.accepted
    if field != "country":
        assert (
            cleanup.contact.first_name,
            cleanup.contact.last_name,
            cleanup.contact.phone,
        ) == before


def test_no_answer_keeps_the_deterministic_values_and_flags_the_field() -> None:
    model = FakeBedrockClient().add_text_answer("I think her name is Jane.")
    done = normalize_lead(
        lead(name="Jane Doe / Acme", email="j@acme.co.uk"),
        default_region="GB",
        model_id="m",
        client=model,
    )
    assert done.normalize["model"] == "no_answer:no_tool_use"
    assert "name_unresolved" in done.normalize["flags"]
    assert done.contact is not None and (done.contact.first_name, done.contact.last_name) == (
        "Jane",
        "Doe",
    )


def test_the_handler_writes_the_record_and_emits_le_normalized(ler: Ler) -> None:
    body = json.dumps(lead(email="ada@analytical-engines.co.uk", name="ada lovelace").to_json())
    assert ler.normalize([body]) == {"batchItemFailures": []}
    [event] = ler.emitted()
    assert (event["source"], event["detail-type"]) == ("crm.dev.ler", "le.normalized")
    assert event["detail"]["contact"]["first_name"] == "Ada"
    assert (
        ler.objects(RECORDS, "normalized/")["normalized/f-1.json"]["contact"]["last_name"]
        == "Lovelace"
    )


def test_a_check_lead_from_make_verify_is_normalized_like_any_lead(ler: Ler) -> None:
    """Normalizing writes nothing outside the check (verify removes the record): it goes on."""
    checked = lead(email="ada@analytical-engines.co.uk", name="ada lovelace")
    checked.mark_check()
    assert ler.normalize([json.dumps(checked.to_json())]) == {"batchItemFailures": []}
    [event] = ler.emitted()
    assert event["detail"]["signals"]["check"] is True
    assert list(ler.objects(RECORDS, "normalized/")) == ["normalized/f-1.json"]


def test_an_unreadable_message_is_refused_into_the_dlq(ler: Ler) -> None:
    answer = ler.normalize(["not json", json.dumps({"no": "lead"})])
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-0"}, {"itemIdentifier": "m-1"}]}
    assert ler.emitted() == []


def test_a_lead_0_1_0_queued_is_read_and_a_newer_format_refused(ler: Ler) -> None:
    """ler-intake-queue: intake stamps version 1; 0.1.0's body (``Lead.to_json`` alone) is read
    as 1, a newer one is refused into the DLQ, never normalised (handlers.common.formats)."""
    queued = message(lead(email="ada@analytical-engines.co.uk", name="ada lovelace"))
    assert queued["v"] == 1
    old = {k: v for k, v in queued.items() if k != "v"}
    newer = {**queued, "lead_id": "f-2", "v": 2}
    answer = ler.normalize([json.dumps(newer), json.dumps(old)])
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-0"}]}
    assert [e["detail"]["lead_id"] for e in ler.emitted()] == ["f-1"]
    assert list(ler.objects(RECORDS, "normalized/")) == ["normalized/f-1.json"]


def test_a_failure_is_reported_for_that_message_only(
    ler: Ler, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = EventBridgeSink.publish

    def flaky(self: Any, detail_type: str, lead: Lead) -> None:
        if lead.lead_id == "f-bad":
            raise RuntimeError("PutEvents throttled")
        real(self, detail_type, lead)

    monkeypatch.setattr(EventBridgeSink, "publish", flaky)
    good = lead(email="ada@analytical-engines.co.uk")
    bad = Lead(lead_id="f-bad", lane="form", received_at=good.received_at, fields=good.fields)
    bodies = [json.dumps(bad.to_json()), json.dumps(good.to_json())]
    answer = normalize.handler(sqs_event(bodies), context())
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-0"}]}
    assert [e["detail"]["lead_id"] for e in ler.emitted()] == ["f-1"]
