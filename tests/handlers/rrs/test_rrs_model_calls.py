"""The two model calls: the grade's hard rules and fallback, the draft's validation and fallback."""

from __future__ import annotations

import json

import pytest

from handlers.review_requests import drafting, grading
from handlers.review_requests.domain import Band, Channel, Purpose, Signal
from handlers.review_requests.drafting import DraftRequest, compose, finish, template, validate
from testsupport.common import FakeBedrockClient

MODEL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
REVIEW_EMAIL = DraftRequest(
    "Ann", "Example Home Services", "boiler service", Channel.EMAIL, Purpose.REVIEW
)
FEEDBACK_SMS = DraftRequest(
    "Ann", "Example Home Services", "boiler service", Channel.SMS, Purpose.FEEDBACK
)
GOOD = (
    "Hi Ann, thank you for having us round for your boiler service. If you were pleased "
    "with the work, a short review would mean a lot to our small team."
)


def grade_with(answer: object, signal: Signal) -> tuple[grading.Grade, FakeBedrockClient]:
    fake = FakeBedrockClient([answer])
    return grading.grade(signal, "Boiler service", model_id=MODEL, client=fake), fake


# Grade -------------------------------------------------------------------------------------


def test_model_grade_is_used_when_no_rule_applies() -> None:
    result, fake = grade_with(
        {"band": "happy", "confidence": 0.92, "reasons": ["rated 5"]}, Signal("event", rating=5)
    )
    assert result.band is Band.HAPPY and result.source == "model" and result.override is None
    assert fake.calls[0]["toolConfig"]["toolChoice"] == {"tool": {"name": "record_grade"}}


def test_the_grade_call_sees_no_name_contact_or_link() -> None:
    _, fake = grade_with(
        {"band": "neutral", "confidence": 0.5, "reasons": []}, Signal("event", notes="fine")
    )
    prompt = json.dumps(fake.calls[0])
    for secret in ("Ann", "@", "http", "+44"):
        assert secret not in prompt


@pytest.mark.parametrize(
    ("signal", "rule"),
    [
        (Signal("event", complaint=True, rating=5), "complaint_flagged"),
        (Signal("event", rating=2), "low_rating"),
    ],
)
def test_a_complaint_or_low_rating_is_unhappy_whatever_the_model_says(
    signal: Signal, rule: str
) -> None:
    result, _ = grade_with({"band": "happy", "confidence": 0.99, "reasons": ["x"]}, signal)
    assert result.band is Band.UNHAPPY and result.model_band == "happy" and result.override == rule


def test_an_unsure_happy_is_neutral() -> None:
    result, _ = grade_with(
        {"band": "happy", "confidence": 0.4, "reasons": ["x"]}, Signal("event", rating=4)
    )
    assert result.band is Band.NEUTRAL and result.override == "low_confidence"


@pytest.mark.parametrize(
    "answer", [{"band": "ecstatic", "confidence": 1, "reasons": []}, {"confidence": 2}]
)
def test_without_a_valid_grade_the_fallback_never_says_happy(answer: object) -> None:
    result, _ = grade_with(answer, Signal("event", rating=5, notes="brilliant"))
    assert result.source == "fallback" and result.band is Band.NEUTRAL
    assert result.fallback_reason == "schema_violation"


def test_fallback_is_unhappy_on_negative_history() -> None:
    fake = FakeBedrockClient().add_text_answer("I think they are happy")
    result = grading.grade(
        Signal("history", prior_sentiment="negative"), "", model_id=MODEL, client=fake
    )
    assert result.band is Band.UNHAPPY and result.fallback_reason == "no_tool_use"


def test_a_throttled_model_raises_for_a_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("time.sleep", lambda seconds: None)
    fake = FakeBedrockClient().throttle(4)
    with pytest.raises(grading.GradeUnavailable):
        grading.grade(Signal(), "", model_id=MODEL, client=fake)


# Draft -------------------------------------------------------------------------------------


def test_a_clean_draft_is_used_and_the_link_is_added_by_code() -> None:
    fake = FakeBedrockClient([{"subject": "How did we do, Ann?", "body": GOOD}])
    draft = compose(REVIEW_EMAIL, model_id=MODEL, client=fake)
    assert draft.source == "model" and draft.rejected == ()
    assert "http" not in json.dumps(fake.calls[0])  # the model never sees a link
    subject, text, _ = finish(draft, REVIEW_EMAIL, "https://g.page/r/x/review")
    assert subject == "How did we do, Ann?"
    assert text.startswith(GOOD) and text.count("https://g.page/r/x/review") == 1


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (GOOD + " Leave it at https://evil.example/review please.", "link"),
        (GOOD + " Visit www.example.com.", "link"),
        (GOOD + " Review us on example.co.uk today.", "link"),
        (GOOD + " Your next service is only £49.", "price"),
        (GOOD + " Enjoy 10% off next time.", "price"),
        (GOOD + " We will send you a voucher as a thank you.", "promise"),
        (GOOD + " Email us at ann@example.org.", "email_address"),
        (GOOD + " Call 07911 123456.", "phone_number"),
        ("Hi [first_name], thanks for choosing us for your boiler service today.", "placeholder"),
        ("Hi Bob, thank you for having us round for your boiler service today.", "wrong_name"),
        ("Hello, thank you for having us round for the boiler service today.", "name_missing"),
        ("Thanks!", "too_short"),
        ("Hi Ann, " + "lovely " * 120, "too_long"),
    ],
)
def test_validation_names_what_is_wrong(body: str, problem: str) -> None:
    assert problem in validate(body, "How did we do, Ann?", REVIEW_EMAIL)


def test_a_feedback_ask_may_not_steer_to_a_public_review() -> None:
    body = "Hi Ann, sorry to hear it. Could you rate us five stars on Google anyway?"
    assert "public_review_in_feedback_ask" in validate(body, "", FEEDBACK_SMS)


@pytest.mark.parametrize(
    "bad",
    [
        GOOD + " Review us at https://g.page/r/fake/review",
        GOOD + " As a thank you, enjoy £10 off your next visit.",
    ],
)
def test_a_draft_with_a_link_or_price_falls_back_to_the_template(bad: str) -> None:
    fake = FakeBedrockClient([{"subject": "How did we do, Ann?", "body": bad}])
    draft = compose(REVIEW_EMAIL, model_id=MODEL, client=fake)
    assert draft.source == "template" and draft.rejected
    assert draft.body == template(REVIEW_EMAIL).body
    _, text, _ = finish(draft, REVIEW_EMAIL, "https://g.page/r/x/review")
    assert "fake" not in text and "£" not in text


def test_no_draft_at_all_falls_back_too() -> None:
    fake = FakeBedrockClient().add_text_answer("Here is a message: ...")
    draft = compose(FEEDBACK_SMS, model_id=MODEL, client=fake)
    assert draft.source == "template" and draft.rejected == ("no_answer:no_tool_use",)


@pytest.mark.parametrize("channel", list(Channel))
@pytest.mark.parametrize("purpose", list(Purpose))
@pytest.mark.parametrize("first_name", ["Ann", ""])
def test_every_template_passes_the_same_validation(
    channel: Channel, purpose: Purpose, first_name: str
) -> None:
    request = DraftRequest(first_name, "Example Home Services", "boiler service", channel, purpose)
    fallback = template(request)
    assert validate(fallback.body, fallback.subject, request) == []


def test_sms_keeps_the_link_and_stop_line_after_the_words() -> None:
    draft = template(FEEDBACK_SMS)
    subject, text, _ = finish(draft, FEEDBACK_SMS, "https://www.example.com/feedback?ref=abc")
    assert subject == ""
    assert text.endswith("https://www.example.com/feedback?ref=abc\nReply STOP to opt out.")
    assert len(text) <= 320


def test_job_titles_with_prices_never_reach_a_template() -> None:
    assert drafting.safe_job_label("Boiler service £80") == "job"
    assert drafting.safe_job_label("Boiler service") == "boiler service"
    assert drafting.safe_job_label("MOT check") == "MOT check"
