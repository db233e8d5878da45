"""rrs-escalator on moto: one handover per escalation, with customer, job, signal, grade, feedback."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.common.link_tokens import Keyring, issue_token
from handlers.review_requests import handover
from handlers.review_requests.domain import request_id_for
from handlers.review_requests.functions import escalator, webhook
from handlers.review_requests.functions import sender as sender_module
from tests.handlers.rrs.conftest import (
    GOOD_FEEDBACK_DRAFT,
    KEYRING,
    Rrs,
    completion,
    draft_answer,
    grade_answer,
    sqs_event,
    url_event,
)

RID = request_id_for("cmp-1")
DUE = dt.datetime(2026, 6, 10, 11, 0, tzinfo=dt.UTC)


def escalate(*bodies: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = escalator.handler(sqs_event(*bodies), None)
    return answer


def owner_mail(rrs: Rrs) -> list[Any]:
    """Handover emails only (the customer's own ask went out before)."""
    return [e for e in rrs.emails() if e.destinations["ToAddresses"] == ["owner@example.com"]]


@pytest.fixture
def unhappy(rrs: Rrs) -> Rrs:
    """A completion with a complaint, asked privately, then private feedback submitted."""
    rrs.put_customer()
    webhook.handler(
        url_event(completion(signal={"rating": 2, "notes": "Arrived late", "complaint": True})),
        None,
    )
    rrs.now = DUE
    rrs.bedrock.add_tool_answer(grade_answer("unhappy")).add_tool_answer(
        draft_answer(GOOD_FEEDBACK_DRAFT, "How did your boiler service go?")
    )
    sender_module.handler(sqs_event({"kind": "send", "request_id": RID}), None)
    rrs.now = DUE + dt.timedelta(hours=3)
    ref = issue_token(
        Keyring.from_secret_string(json.dumps(KEYRING)),
        subject=RID,
        action="feedback",
        ttl_seconds=3600,
        now=rrs.now.timestamp(),
    )
    feedback = {
        "type": "feedback.submitted",
        "id": "fb-9",
        "ref": ref,
        "text": "Water all over the floor.",
        "rating": 1,
    }
    assert webhook.handler(url_event(feedback), None)["statusCode"] == 202
    return rrs


def test_both_escalations_reach_the_owner_once_each_with_the_full_handover(unhappy: Rrs) -> None:
    queued = unhappy.drain()
    assert [m["reason"] for m in queued] == ["unhappy_grade", "private_feedback"]
    assert escalate(*queued, *queued) == {"batchItemFailures": []}  # every message twice

    emails = owner_mail(unhappy)
    assert len(emails) == 2
    assert len(unhappy.emails()) == 3  # and the customer's private ask
    grade_mail, feedback_mail = emails
    assert "an unhappy customer (Ann Smith)" in grade_mail.subject
    sent = [e for e in unhappy.audit(RID) if e["event"] == "escalation_sent"]
    assert sorted(e["ts"] for e in sent) == [
        "escalation#feedback-fb-9#sent",
        "escalation#unhappy-grade#sent",
    ]
    assert all(e["facts"]["to"] == "owner@example.com" and e["facts"]["text"] for e in sent)
    # The plain-text part as sent (the audit keeps it; moto keeps only the HTML part).
    texts = {e["ts"].split("#")[1]: e["facts"]["text"] for e in sent}
    for text in (
        "ann@example.org",
        "Boiler service",
        "Arrived late",
        "Complaint raised: yes",
        "Mood: unhappy",
        "Judged from: read from the job's notes and rating",
    ):
        assert text in texts["unhappy-grade"], text
        label, _, value = text.rpartition(": ")  # the HTML part: the same, as a table
        assert (f">{label}</th><td>{value.replace(chr(39), '&#x27;')}</td>" if label
                else value) in grade_mail.body, text
    assert "Water all over the floor." in texts["feedback-fb-9"] and "Water all over the floor." in feedback_mail.body
    for body in (texts["feedback-fb-9"], feedback_mail.body):
        assert "Earlier follow-ups asked for this customer" in body
    everything = grade_mail.body + feedback_mail.body + "".join(texts.values())
    for internal in ("band", "completion id", "request state", "prior_sentiment", "T09:"):
        assert internal not in everything, internal


def test_a_concurrent_copy_finds_the_claim_and_stands_down(unhappy: Rrs) -> None:
    from handlers.review_requests.store import AuditEntry

    unhappy.drain()
    flow = registry.service(escalator)
    flow.audit.append(
        AuditEntry(
            RID,
            handover.claim_key("unhappy-grade", 0),
            "escalation_claim",
            {},
            "2026-06-10T13:59:50Z",
        )
    )
    unhappy.now = dt.datetime(2026, 6, 10, 14, 0, tzinfo=dt.UTC)
    assert flow.process(RID, "unhappy_grade", "unhappy-grade", unhappy.now) == "in_flight"
    assert owner_mail(unhappy) == []
    # Past the lease with no "sent" marker, the holder died: the next claim takes over.
    later = unhappy.now + dt.timedelta(minutes=5)
    assert flow.process(RID, "unhappy_grade", "unhappy-grade", later) == "sent"
    assert flow.process(RID, "unhappy_grade", "unhappy-grade", later) == "duplicate"
    assert len(owner_mail(unhappy)) == 1
    claims = [e["ts"] for e in unhappy.audit(RID) if e["event"] == "escalation_claim"]
    assert claims == ["escalation#unhappy-grade#claim#000", "escalation#unhappy-grade#claim#001"]


def test_a_failed_email_is_retried_and_sent_once(
    unhappy: Rrs, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued = [m for m in unhappy.drain() if m["reason"] == "private_feedback"]
    monkeypatch.setenv("SENDER_EMAIL", "crm-bot@unverified.example.net")
    registry.restart()
    assert escalate(*queued) == {"batchItemFailures": [{"itemIdentifier": "m-0-1"}]}
    monkeypatch.setenv("SENDER_EMAIL", "crm-bot@example.com")
    registry.restart()
    unhappy.now += dt.timedelta(minutes=10)  # redelivered after the visibility timeout
    assert escalate(*queued) == {"batchItemFailures": []}
    assert len(owner_mail(unhappy)) == 1


def test_a_straggler_escalation_is_dropped_when_the_ask_went_out_after_all(unhappy: Rrs) -> None:
    unhappy.drain()
    body = {"kind": "escalate", "request_id": RID, "reason": "straggler", "dedupe_key": "straggler"}
    assert escalate(body) == {"batchItemFailures": []}
    assert owner_mail(unhappy) == []


def test_the_audit_keeps_every_entry_it_ever_had(unhappy: Rrs) -> None:
    before = {(e["ts"], json.dumps(e, sort_keys=True, default=str)) for e in unhappy.audit(RID)}
    escalate(*unhappy.drain())
    after = {(e["ts"], json.dumps(e, sort_keys=True, default=str)) for e in unhappy.audit(RID)}
    assert before < after  # only additions, nothing rewritten


def test_claim_decisions() -> None:
    now = dt.datetime(2026, 6, 10, 12, 0, tzinfo=dt.UTC)
    lease = dt.timedelta(seconds=60)
    claim0 = {"ts": handover.claim_key("k", 0), "at": "2026-06-10T11:59:30Z"}
    old = {"ts": handover.claim_key("k", 0), "at": "2026-06-10T11:00:00Z"}
    assert handover.claim_decision([], "k", now, lease).action == "send"
    assert handover.claim_decision([claim0], "k", now, lease).action == "in_flight"
    assert handover.claim_decision([old], "k", now, lease) == handover.ClaimDecision("send", 1)
    assert (
        handover.claim_decision([old, {"ts": handover.sent_key("k")}], "k", now, lease).action
        == "sent"
    )


def test_escalations_0_1_0_queued_are_handled_and_a_newer_format_refused(unhappy: Rrs) -> None:
    """rrs-escalations: the writers stamp version 1; 0.1.0's message (no ``v``) is read as 1,
    a newer one is refused into the DLQ, no mail sent (handlers.common.formats)."""
    queued = unhappy.drain()
    assert [m["v"] for m in queued] == [1, 1]
    assert escalate(*({**m, "v": 2} for m in queued)) == {
        "batchItemFailures": [{"itemIdentifier": "m-0-1"}, {"itemIdentifier": "m-1-1"}]
    }
    assert owner_mail(unhappy) == []
    old = [{k: v for k, v in m.items() if k != "v"} for m in queued]
    assert escalate(*old) == {"batchItemFailures": []}
    assert len(owner_mail(unhappy)) == 2


def test_unusable_escalations_are_refused_into_the_dlq(rrs: Rrs) -> None:
    answer = escalate({"kind": "escalate", "request_id": RID})
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-0-1"}]}
    assert owner_mail(rrs) == []


@pytest.mark.parametrize("stray", [{"kind": "send", "request_id": RID}, {"request_id": RID}])
def test_a_message_of_another_kind_fails_so_it_reaches_the_dlq(
    rrs: Rrs, stray: dict[str, Any]
) -> None:
    """rrs-escalations carries escalations only: a stray fails (DLQ), it is not swallowed."""
    assert escalate(stray) == {"batchItemFailures": [{"itemIdentifier": "m-0-1"}]}
    assert owner_mail(rrs) == [] and rrs.audit(RID) == []


def test_the_handover_speaks_plain_words_in_the_business_time_zone() -> None:
    mail = handover.build(
        reason="private_feedback",
        request_id="req-1",
        request={"customer_id": "c-7", "completion_id": "done-3", "state": "asked", "channel": "sms",
                 "signal": {"rating": 2, "complaint": False}},
        customer={"name": "Ann Smith", "email": "ann@example.org"},
        job={"job_title": "Boiler service", "completed_at": "2026-07-01T15:30:00Z"},
        trail=[{"event": "feedback", "at": "2026-07-02T08:00:00Z",
                "facts": {"submitted_at": "2026-07-02T08:00:00Z", "rating": 2, "text": "Late again."}}],
        business="Acme Heating",
        zone="Europe/London",
    )
    subject, body = mail.subject, mail.text
    assert subject == "[Acme Heating] Please follow up: private feedback from a customer (Ann Smith)"
    assert "  Finished: Wed 1 Jul 2026, 16:30 BST" in body
    assert "  Thu 2 Jul 2026, 09:00 BST, rating 2 out of 5" in body
    assert "  Review request by: text message" in body and "  Complaint raised: no" in body
    assert "Reference (for support): request req-1, customer c-7, completion done-3." in body
    assert "2026-07-01T" not in body and "_id" not in body and "state:" not in body
    # The HTML part says the same, through html_kit: fields as a table, her words quoted.
    assert "<th scope=row" in mail.html and ">Wed 1 Jul 2026, 16:30 BST</td>" in mail.html
    assert "<blockquote" in mail.html and "Late again." in mail.html
    assert "href='mailto:ann@example.org' data-primary" in mail.html and ">Email Ann Smith</a>" in mail.html
    assert "Reference (for support): request req-1, customer c-7, completion done-3." in mail.html


@pytest.mark.parametrize(("channel", "to", "field"), [("email", "ann@example.org", "Email"),
                                                      ("sms", "+447911123456", "Phone")])
def test_an_unconfirmed_ask_names_the_address_it_was_claimed_for_when_the_sheet_lost_it(
    channel: str, to: str, field: str
) -> None:
    """#40: the customer is gone from the sheet mirror; rrs-audit still holds where the ask went."""
    mail = handover.build(
        reason="unconfirmed_send",
        request_id="req-1",
        request={"customer_id": "c-7", "customer_name": "Ann Smith", "state": "asked", "channel": channel},
        customer=None,
        job=None,
        trail=[{"event": "message", "at": "2026-07-02T08:00:00Z",
                "facts": {"channel": channel, "to": to, "subject": "How did we do?", "text": "Hi Ann"}}],
        business="Acme Heating",
        zone="Europe/London",
    )
    assert f"  {field}: {to}" in mail.text, mail.text
    assert f"{field}: -" not in mail.text
    assert "  Where it stands: claimed for sending; never confirmed sent" in mail.text
    scheme = "mailto:" if channel == "email" else "tel:"
    assert f"href='{scheme}{to}' data-primary" in mail.html
