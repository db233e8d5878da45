"""rrs-sender on moto: once-only sends, opt-out at send time, grades and links, the audit."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from handlers.common.entry import registry
from handlers.common.link_tokens import Keyring, verify_short_token
from handlers.review_requests.domain import Channel, Purpose, request_id_for, request_id_of
from handlers.review_requests.drafting import DraftRequest, template
from handlers.review_requests.functions import sender as sender_module
from handlers.review_requests.functions import sweep as sweep_module
from handlers.review_requests.functions import webhook
from tests.handlers.rrs.conftest import (
    FEEDBACK_URL,
    GOOD_EMAIL_DRAFT,
    GOOD_FEEDBACK_DRAFT,
    KEYRING,
    REVIEW_URL,
    SMS_ARN,
    Rrs,
    completion,
    draft_answer,
    grade_answer,
    sqs_event,
    url_event,
)

RID = request_id_for("cmp-1")
SEND = {"kind": "send", "request_id": RID}
DUE = dt.datetime(2026, 6, 10, 11, 0, tzinfo=dt.UTC)


@pytest.fixture
def scheduled(rrs: Rrs) -> Rrs:
    """A customer, a completion accepted by the webhook, and the clock at the due time."""
    rrs.put_customer()
    assert (
        webhook.handler(
            url_event(completion(signal={"rating": 5, "notes": "Spotless, thanks"})), None
        )["statusCode"]
        == 200
    )
    assert rrs.request(RID)["state"] == "scheduled"
    rrs.now = DUE
    return rrs


def send(*bodies: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = sender_module.handler(sqs_event(*bodies), None)
    return answer


def script(rrs: Rrs, band: str, body: str, subject: str | None = "How did we do, Ann?") -> None:
    rrs.bedrock.add_tool_answer(grade_answer(band)).add_tool_answer(draft_answer(body, subject))


def audit_events(rrs: Rrs) -> list[str]:
    return [e["event"] for e in rrs.audit(RID)]


def audit_facts(rrs: Rrs, event: str) -> dict[str, Any]:
    found = [e for e in rrs.audit(RID) if e["event"] == event]
    assert len(found) == 1, (event, [e["event"] for e in rrs.audit(RID)])
    return dict(found[0]["facts"])


# The happy and unhappy paths ---------------------------------------------------------------


def test_a_happy_customer_is_asked_for_a_public_review_and_it_is_all_audited(
    scheduled: Rrs,
) -> None:
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)
    assert send(SEND) == {"batchItemFailures": []}

    [email], [text] = scheduled.emails(), scheduled.texts()
    assert email.destinations["ToAddresses"] == ["ann@example.org"]
    assert email.source == "Example Home Services <crm-bot@example.com>"
    assert scheduled.mail[0]["ReplyToAddresses"] == ["office@example.com"]
    assert email.subject == "How did we do, Ann?"
    assert text.startswith(GOOD_EMAIL_DRAFT) and text.count(REVIEW_URL) == 1
    assert "Leave a review</a>" in email.body  # the HTML part's button
    assert FEEDBACK_URL not in email.body

    item = scheduled.request(RID)
    assert (item["state"], item["band"], item["purpose"], item["draft_source"]) == (
        "asked",
        "happy",
        "review",
        "model",
    )
    assert audit_events(scheduled) == ["intake", "grade", "message", "delivered"]
    grade = audit_facts(scheduled, "grade")
    assert grade["band"] == "happy" and grade["source"] == "model"
    assert grade["model_id"].startswith("global.anthropic.claude-haiku-4-5")
    assert grade["facts_given"]["rating_out_of_5"] == 5
    assert grade["facts_given"]["notes"] == "Spotless, thanks"
    assert grade["signal"]["source"] == "event"
    message = audit_facts(scheduled, "message")
    assert message["text"] == text and message["link"] == REVIEW_URL
    assert message["to"] == "ann@example.org" and message["purpose"] == "review"
    assert message["facts_given"]["customer_first_name"] == "Ann"
    assert audit_facts(scheduled, "delivered")["provider_message_id"]


def test_an_unhappy_grade_never_receives_the_public_review_link(scheduled: Rrs) -> None:
    script(scheduled, "unhappy", GOOD_FEEDBACK_DRAFT, "How did your boiler service go?")
    send(SEND)

    [email], [text] = scheduled.emails(), scheduled.texts()
    assert REVIEW_URL not in email.body and "g.page" not in email.body
    link = next(word for word in text.split() if word.startswith(FEEDBACK_URL))
    assert len(link) <= 100, link  # a short ref (a full token made it over 200)
    ref = parse_qs(urlsplit(link).query)["ref"][0]
    keyring = Keyring.from_secret_string(json.dumps(KEYRING))
    claims = verify_short_token(ref, keyring, action="feedback", now=DUE.timestamp())
    assert request_id_of(claims.subject) == RID

    item = scheduled.request(RID)
    assert (item["state"], item["band"], item["purpose"]) == ("diverted", "unhappy", "feedback")
    assert audit_facts(scheduled, "message")["link"] == link
    assert scheduled.sends() == []  # the escalation goes to the escalator's queue only
    assert scheduled.escalations() == [
        {
            "kind": "escalate",
            "request_id": RID,
            "reason": "unhappy_grade",
            "dedupe_key": "unhappy-grade",
            "v": 1,
        }
    ]


def test_a_happy_model_grade_on_a_complaint_still_gets_the_private_link(scheduled: Rrs) -> None:
    scheduled.table("REQUESTS_TABLE").update_item(
        Key={"request_id": RID},
        UpdateExpression="SET #signal.complaint = :t",
        ExpressionAttributeNames={"#signal": "signal"},
        ExpressionAttributeValues={":t": True},
    )
    script(scheduled, "happy", GOOD_FEEDBACK_DRAFT, "How did your boiler service go?")
    send(SEND)
    [email] = scheduled.emails()
    assert REVIEW_URL not in email.body
    grade = audit_facts(scheduled, "grade")
    assert (grade["model_band"], grade["band"], grade["override"]) == (
        "happy",
        "unhappy",
        "complaint_flagged",
    )


def test_a_neutral_grade_is_diverted_without_escalation(scheduled: Rrs) -> None:
    script(scheduled, "neutral", GOOD_FEEDBACK_DRAFT, "How did your boiler service go?")
    send(SEND)
    assert scheduled.request(RID)["state"] == "diverted"
    assert scheduled.drain() == []


@pytest.mark.parametrize(
    ("band", "bad_draft", "problem"),
    [
        ("happy", GOOD_EMAIL_DRAFT + " Leave it at https://g.page/r/other/review", "link"),
        ("happy", GOOD_EMAIL_DRAFT + " Next service only £45!", "price"),
        ("unhappy", GOOD_FEEDBACK_DRAFT + " We'll refund you, promise.", "promise"),
        (
            "unhappy",
            "Hi Ann, so sorry. Could you still give us five stars on Google?",
            "public_review_in_feedback_ask",
        ),
    ],
)
def test_a_bad_model_draft_is_rejected_and_the_template_goes_out(
    scheduled: Rrs, band: str, bad_draft: str, problem: str
) -> None:
    script(scheduled, band, bad_draft)
    send(SEND)
    [email], [text] = scheduled.emails(), scheduled.texts()
    purpose = Purpose.REVIEW if band == "happy" else Purpose.FEEDBACK
    expected = template(
        DraftRequest("Ann", "Example Home Services", "boiler service", Channel.EMAIL, purpose)
    )
    assert text.startswith(expected.body) and email.subject == expected.subject
    assert "other/review" not in email.body and "£" not in email.body and "refund" not in email.body
    message = audit_facts(scheduled, "message")
    assert message["draft_source"] == "template" and problem in message["rejected"]
    assert (REVIEW_URL in email.body) is (band == "happy")


def test_sms_goes_through_the_origination_identity(scheduled: Rrs) -> None:
    scheduled.table("REQUESTS_TABLE").update_item(
        Key={"request_id": RID},
        UpdateExpression="SET channel = :s, contact = :p",
        ExpressionAttributeValues={":s": "sms", ":p": "+447911123456"},
    )
    script(
        scheduled,
        "happy",
        "Hi Ann, thanks for choosing us for your boiler service. A quick review would help:",
        None,
    )
    send(SEND)
    [sms] = scheduled.sms
    assert sms["OriginationIdentity"] == SMS_ARN
    assert sms["DestinationPhoneNumber"] == "+447911123456"
    assert sms["MessageType"] == "TRANSACTIONAL"
    assert sms["MessageBody"].endswith(f"{REVIEW_URL}\nReply STOP to opt out.")
    assert scheduled.emails() == []
    assert audit_facts(scheduled, "delivered")["provider_message_id"] == "sms-1"


# Once only ---------------------------------------------------------------------------------


def test_a_duplicate_sqs_delivery_sends_one_message(scheduled: Rrs) -> None:
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)
    assert send(SEND, SEND) == {"batchItemFailures": []}  # both copies in one batch
    assert send(SEND) == {"batchItemFailures": []}  # and a late redelivery
    assert len(scheduled.emails()) == 1
    assert scheduled.bedrock.pending == 0 and len(scheduled.bedrock.calls) == 2
    assert audit_events(scheduled).count("message") == 1


def test_two_deliveries_that_both_read_scheduled_still_send_once(
    scheduled: Rrs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real race: the second copy read the request before the first one committed."""
    from handlers.review_requests.store import Requests

    stale = scheduled.request(RID)
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)
    send(SEND)
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)
    monkeypatch.setattr(Requests, "get", lambda self, request_id: dict(stale))
    send(SEND)
    assert len(scheduled.emails()) == 1
    assert scheduled.request(RID)["state"] == "asked"
    assert (
        audit_events(scheduled).count("message") == 1
        and audit_events(scheduled).count("grade") == 1
    )


def test_the_sweep_racing_the_live_send_gives_one_message(
    scheduled: Rrs, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handlers.review_requests.store import Requests

    scheduled.now = DUE + dt.timedelta(hours=1)  # the schedule "misfired": still scheduled
    stale = scheduled.request(RID)
    assert sweep_module.handler({}, None)["requeued"] == 1
    swept = scheduled.drain()
    assert swept == [{**SEND, "v": 1}]
    # The live schedule's message and the sweep's copy are read before either commits.
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)
    with monkeypatch.context() as patch:
        patch.setattr(Requests, "get", lambda self, request_id: dict(stale))
        assert send(SEND, *swept) == {"batchItemFailures": []}
    assert len(scheduled.emails()) == 1
    assert scheduled.request(RID)["state"] == "asked"
    assert sweep_module.handler({}, None) == {"requeued": 0, "escalated": 0, "lost_races": 0, "unconfirmed": 0, "degraded_notice": 0}


def test_an_opt_out_after_scheduling_stops_the_send(scheduled: Rrs) -> None:
    scheduled.now = dt.datetime(2026, 6, 10, 10, 30, tzinfo=dt.UTC)
    webhook.handler(
        url_event({"type": "contact.opted_out", "id": "o-1", "contact": "ANN@example.org"}), None
    )
    scheduled.now = DUE
    assert send(SEND) == {"batchItemFailures": []}
    assert scheduled.emails() == [] and scheduled.sms == []
    assert scheduled.bedrock.calls == []  # nobody graded or phrased anything
    item = scheduled.request(RID)
    assert (item["state"], item["suppressed_reason"]) == ("suppressed", "opted_out")
    assert audit_facts(scheduled, "suppressed") == {
        "reason": "opted_out",
        "contact": "ann@example.org",
    }


def test_a_phone_opt_out_also_stops_an_email_ask(scheduled: Rrs) -> None:
    webhook.handler(
        url_event({"type": "contact.opted_out", "id": "o-2", "contact": "+44 7911 123456"}), None
    )
    send(SEND)
    assert scheduled.emails() == [] and scheduled.request(RID)["state"] == "suppressed"


# Quiet hours, failures, retries ------------------------------------------------------------


def test_quiet_hours_defer_without_grading_and_the_sweep_sends_next_morning(scheduled: Rrs) -> None:
    scheduled.now = dt.datetime(2026, 6, 10, 19, 30, tzinfo=dt.UTC)  # 20:30 in London
    send(SEND)
    item = scheduled.request(RID)
    assert item["state"] == "scheduled" and item["due"] == "2026-06-11T08:00:00Z"
    assert scheduled.bedrock.calls == [] and scheduled.emails() == []
    assert audit_facts(scheduled, "deferred")["until"] == "2026-06-11T08:00:00Z"

    scheduled.now = dt.datetime(2026, 6, 11, 8, 45, tzinfo=dt.UTC)  # 09:45 London, past grace
    assert sweep_module.handler({}, None)["requeued"] == 1
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)
    send(*scheduled.drain())
    assert len(scheduled.emails()) == 1 and scheduled.request(RID)["state"] == "asked"


def test_a_stray_early_copy_changes_nothing(scheduled: Rrs) -> None:
    scheduled.now = DUE - dt.timedelta(hours=1)
    assert send(SEND) == {"batchItemFailures": []}
    assert scheduled.bedrock.calls == [] and scheduled.emails() == []
    assert scheduled.request(RID)["state"] == "scheduled"
    assert audit_events(scheduled) == ["intake"]


def test_a_failed_send_releases_the_claim_so_the_retry_sends_once(
    scheduled: Rrs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SENDER_EMAIL", "crm-bot@unverified.example.net")
    registry.restart()
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)
    failed = send(SEND)
    assert failed == {"batchItemFailures": [{"itemIdentifier": "m-0-1"}]}
    assert scheduled.request(RID)["state"] == "scheduled" and "claim" not in scheduled.request(RID)
    assert audit_events(scheduled)[-1] == "send_failed"

    monkeypatch.setenv("SENDER_EMAIL", "crm-bot@example.com")

    registry.restart()
    scheduled.now = DUE + dt.timedelta(minutes=9)  # SQS redelivers after the visibility timeout
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)
    assert send(SEND) == {"batchItemFailures": []}
    assert len(scheduled.emails()) == 1 and scheduled.request(RID)["state"] == "asked"


def test_a_throttled_model_fails_only_that_record(
    scheduled: Rrs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("time.sleep", lambda seconds: None)
    scheduled.bedrock.throttle(4)
    answer = send(SEND, {"kind": "send", "request_id": "rq-unknown"})
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-0-1"}]}
    assert scheduled.request(RID)["state"] == "scheduled" and scheduled.emails() == []


def test_a_carrier_opt_out_is_recorded_as_suppressed(
    scheduled: Rrs, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.exceptions import ClientError

    from handlers.common.aws_clients import client

    scheduled.table("REQUESTS_TABLE").update_item(
        Key={"request_id": RID},
        UpdateExpression="SET channel = :s, contact = :p",
        ExpressionAttributeValues={":s": "sms", ":p": "+447911123456"},
    )

    def opted_out(**kwargs: Any) -> dict[str, Any]:
        response: Any = {
            "Error": {"Code": "ConflictException", "Message": "opted out"},
            "Reason": "DESTINATION_PHONE_NUMBER_OPTED_OUT",
        }
        raise ClientError(response, "SendTextMessage")

    monkeypatch.setattr(client("pinpoint-sms-voice-v2"), "send_text_message", opted_out)
    script(
        scheduled,
        "happy",
        "Hi Ann, thanks for choosing us for your boiler service. A quick review would help:",
        None,
    )
    assert send(SEND) == {"batchItemFailures": []}
    item = scheduled.request(RID)
    assert (item["state"], item["suppressed_reason"]) == ("suppressed", "opted_out_at_carrier")


def test_a_send_0_1_0_scheduled_is_sent_and_a_newer_format_refused(scheduled: Rrs) -> None:
    """rrs-work: the ask schedule's input is version 1; 0.1.0's (``SEND``, no ``v``) is read as
    1, a newer one is refused into the DLQ, nothing sent (handlers.common.formats). Scheduler
    sends the ``Input`` as the message body (templated SQS target:
    https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-targets-templated.html)."""
    target = json.loads(scheduled.schedule(RID)["Target"]["Input"])
    assert target == {**SEND, "v": 1}
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)  # refused before any model call
    assert send({**SEND, "v": 2}) == {"batchItemFailures": [{"itemIdentifier": "m-0-1"}]}
    assert scheduled.emails() == [] and scheduled.request(RID)["state"] == "scheduled"
    assert send(SEND) == {"batchItemFailures": []}
    assert len(scheduled.emails()) == 1


def test_malformed_send_messages_are_refused_into_the_dlq(rrs: Rrs) -> None:
    answer = send({"kind": "send"}, {"kind": "send", "request_id": "no-prefix"})
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-0-1"}, {"itemIdentifier": "m-1-1"}]}
    assert rrs.emails() == []


@pytest.mark.parametrize(
    "stray",
    [
        {"kind": "escalate", "request_id": RID, "reason": "straggler", "dedupe_key": "straggler"},
        {"request_id": RID},
        "not json",
    ],
)
def test_a_message_of_another_kind_fails_so_it_reaches_the_dlq(
    scheduled: Rrs, stray: dict[str, Any] | str
) -> None:
    """rrs-work carries sends only: a stray is a batch item failure, never a silent success."""
    script(scheduled, "happy", GOOD_EMAIL_DRAFT)
    event = sqs_event(SEND, {"placeholder": True})
    event["Records"][1]["body"] = stray if isinstance(stray, str) else json.dumps(stray)
    answer = sender_module.handler(event, None)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-1-1"}]}
    assert scheduled.request(RID)["state"] == "asked"  # the good record in the batch still went
    assert len(scheduled.emails()) == 1


# Daily spend caps (issue #41) ---------------------------------------------------------------


def test_a_spent_daily_sms_cap_defers_the_ask_to_the_next_day_and_calls_no_model(
    scheduled: Rrs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``dailySms`` the ask is neither sent nor dropped: its due time moves to the next
    UTC day (the sweep re-drives it), before any model call is spent on it."""
    scheduled.table("REQUESTS_TABLE").update_item(
        Key={"request_id": RID},
        UpdateExpression="SET channel = :s, contact = :p",
        ExpressionAttributeValues={":s": "sms", ":p": "+447911123456"},
    )
    monkeypatch.setenv("DAILY_SMS", "1")
    requests = scheduled.table("REQUESTS_TABLE")
    requests.put_item(Item={"request_id": "spend#sms#2026-06-10", "spent": 1})  # the day's one SMS
    assert send(SEND) == {"batchItemFailures": []}
    assert scheduled.sms == [] and scheduled.bedrock.calls == []
    item = scheduled.request(RID)
    assert item["state"] == "scheduled" and item["due"].startswith("2026-06-11T00:00:00")
    deferred = audit_facts(scheduled, "deferred")
    assert deferred["reason"] == "sms_cap"

    scheduled.now = DUE + dt.timedelta(days=1)
    script(scheduled, "happy", "Hi Ann, thanks for choosing us. A quick review would help:", None)
    send(SEND)
    assert len(scheduled.sms) == 1 and scheduled.request(RID)["state"] == "asked"


def test_a_spent_daily_model_cap_asks_with_the_rules_and_the_template(
    scheduled: Rrs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAILY_MODEL_CALLS", "0")
    send(SEND)
    assert scheduled.bedrock.calls == []
    assert len(scheduled.emails()) == 1  # asked all the same
    item = scheduled.request(RID)
    assert (item["grade_source"], item["draft_source"]) == ("fallback", "template")
    assert audit_facts(scheduled, "message")["rejected"] == ["no_answer:capped"]
