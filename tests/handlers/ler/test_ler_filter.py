"""ler-filter: junk signals weighed, the model only for borderline leads, bounded by the rules."""

from __future__ import annotations

from typing import Any

import pytest

from handlers.lead_enricher.contract import FilterSettings
from handlers.lead_enricher.events import EventBridgeSink
from handlers.lead_enricher.junk_signals import weigh
from handlers.lead_enricher.lead import Contact, Dedupe, Enrichment, Lead
from handlers.lead_enricher.screening import JunkFilter
from tests.handlers.ler.conftest import SOURCE, Ler
from testsupport.common import FakeBedrockClient

CONFIG = FilterSettings(
    event_source=SOURCE,
    cache_table="dev-ler-enrich-cache",
    filter_model_id="haiku",
    daily_model_calls=23,
    junk_score=0.75,
    borderline_score=0.4,
)


def lead(
    contact: Contact | None,
    message: str = "",
    *,
    dedupe: Dedupe | None = None,
    enrichment: Enrichment | None = None,
    **signals: Any,
) -> Lead:
    return Lead(
        lead_id="f-5",
        lane="form",
        received_at="2026-11-28T10:00:00+00:00",
        contact=contact,
        message=message,
        signals={"url_count": message.count("http"), **signals},
        dedupe=dedupe,
        enrichment=enrichment,
    )


JANE = Contact(
    email="jane@acme-widgets.co.uk", phone="+447400123456", first_name="Jane", last_name="Doe"
)
BORDERLINE = Contact(
    email="info@qwrtzk-media.co.uk", first_name="Jo"
)  # gibberish domain, thin lead
BORDERLINE_MESSAGE = "We offer backlinks packages, see http://a.example and http://b.example"


@pytest.mark.parametrize(
    ("subject", "decisive", "reason"),
    [
        (lead(Contact(first_name="Jane")), "no_contact", "no_contact"),
        (lead(Contact(email="test@example.com")), "placeholder_email", "placeholder_email"),
    ],
)
def test_some_signals_decide_alone(subject: Lead, decisive: str, reason: str) -> None:
    weighed = weigh(subject)
    assert (weighed.decisive, weighed.score, weighed.reason) == (decisive, 1.0, reason)


def test_signals_are_weighed_both_ways() -> None:
    good = weigh(lead(JANE, "Please send a quote", enrichment=Enrichment(status="enriched")))
    assert good.score == 0.0 and set(good.signals) == {
        "known_company",
        "business_email",
        "valid_phone",
    }
    bad = weigh(lead(Contact(email="noreply@xkcdqwert.co.uk", first_name="Asdfgh"), "BUY NOW " * 5))
    assert {"role_address", "gibberish_name", "shouting"} <= set(bad.signals)
    assert bad.reason == "gibberish_name"


def screen(subject: Lead, model: FakeBedrockClient) -> Any:
    return JunkFilter(CONFIG, sink=EventBridgeSink(SOURCE), model_client=model).screen(subject)


def test_a_clean_lead_passes_without_the_model() -> None:
    model = FakeBedrockClient()
    result = screen(lead(JANE, "Quote please"), model)
    assert (result.decision, result.reason) == ("clean", "below_borderline") and model.calls == []


def test_junk_above_the_score_is_dropped_without_the_model() -> None:
    model = FakeBedrockClient()
    spam = lead(
        Contact(email="x@rank-agency.co.uk", first_name="Mike"),
        "seo http://a http://b http://c http://d",
    )
    result = screen(spam, model)
    assert (result.decision, result.reason) == ("junk", "many_links") and model.calls == []


def test_the_model_breaks_a_borderline_tie() -> None:
    model = FakeBedrockClient([{"decision": "drop", "reason": "vendor_pitch"}])
    subject = lead(BORDERLINE, BORDERLINE_MESSAGE)
    assert 0.4 <= weigh(subject).score < 0.75
    result = screen(subject, model)
    assert (result.decision, result.reason, result.model) == ("junk", "model:vendor_pitch", "used")
    prompt = model.calls[0]["messages"][0]["content"][0]["text"]
    assert "backlinks" in prompt and "junk score" in prompt


@pytest.mark.parametrize(
    ("answer", "dedupe", "outcome"),
    [
        ({"decision": "keep", "reason": "genuine"}, None, "used"),
        ({"decision": "drop", "reason": "looks odd"}, None, "discarded:unlisted_reason"),
        (
            {"decision": "drop", "reason": "spam"},
            Dedupe(verdict="link:c-1"),
            "discarded:known_contact",
        ),
        ({"decision": "maybe", "reason": "spam"}, None, "no_answer:schema_violation"),
    ],
)
def test_a_model_answer_outside_the_rules_keeps_the_lead(
    answer: dict[str, str], dedupe: Dedupe | None, outcome: str
) -> None:
    model = FakeBedrockClient([answer])
    # A known contact pulls the score down; more links keep it in the band for the test.
    message = BORDERLINE_MESSAGE + (" http://c.example http://d.example" if dedupe else "")
    subject = lead(BORDERLINE, message, dedupe=dedupe)
    assert 0.4 <= weigh(subject).score < 0.75
    result = screen(subject, model)
    assert (result.decision, result.reason, result.model) == ("clean", "borderline_kept", outcome)


def test_the_handler_emits_clean_or_junk(ler: Ler) -> None:
    junk_filter = JunkFilter(CONFIG, sink=EventBridgeSink(SOURCE), model_client=FakeBedrockClient())
    junk_filter.handle({"detail-type": "le.deduped", "detail": lead(JANE, "Quote").to_json()})
    junk_filter.handle(
        {"detail-type": "le.deduped", "detail": lead(Contact(first_name="X")).to_json()}
    )
    emitted = [(e["detail-type"], e["detail"]["screening"]["reason"]) for e in ler.emitted()]
    assert emitted == [("le.clean", "below_borderline"), ("le.junk", "no_contact")]
    with pytest.raises(ValueError, match=r"expected a le\.deduped event"):
        junk_filter.handle({"detail-type": "le.enriched", "detail": lead(JANE).to_json()})


def test_a_spent_daily_model_cap_keeps_a_borderline_lead_by_the_rules(
    ler: Ler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #41: ler-filter as wired, past ``dailyModelCalls``: Bedrock is not called and the
    borderline lead is kept by the rules, as when the model gives no answer."""
    import datetime as dt

    from handlers.lead_enricher.functions import filter as filter_function

    model = FakeBedrockClient([{"decision": "drop", "reason": "vendor_pitch"}])
    monkeypatch.setattr("handlers.common.model_call.bedrock_runtime", lambda region=None: model)
    monkeypatch.setenv("DAILY_MODEL_CALLS", "0")
    noon = dt.datetime(2026, 11, 28, 12, tzinfo=dt.UTC)
    junk_filter = filter_function.wire(FilterSettings.from_environ(), lambda: noon)
    junk_filter.handle(
        {"detail-type": "le.deduped", "detail": lead(BORDERLINE, BORDERLINE_MESSAGE).to_json()}
    )
    [emitted] = ler.emitted()
    assert emitted["detail-type"] == "le.clean" and model.calls == []
    screening = emitted["detail"]["screening"]
    assert (screening["reason"], screening["model"]) == ("borderline_kept", "no_answer:capped")
