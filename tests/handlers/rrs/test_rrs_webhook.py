"""rrs-webhook on moto: authenticity first, one request and one schedule per completion."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.common.link_tokens import Keyring, issue_short_token, issue_token
from handlers.review_requests.domain import ref_subject, request_id_for
from handlers.review_requests.functions import webhook
from tests.handlers.rrs.conftest import (
    ENV,
    ESCALATIONS,
    FORGET_SALT,
    KEYRING,
    NOW,
    QUEUE,
    Rrs,
    completion,
    response_body,
    url_event,
)
from testsupport.old_links import issue_s1_short_token

RID = request_id_for("cmp-1")


def call(event: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = webhook.handler(event, None)
    return answer


def nothing_written(rrs: Rrs) -> None:
    for key in ("REQUESTS_TABLE", "JOBS_TABLE", "OPTOUT_TABLE", "AUDIT_TABLE"):
        assert rrs.items(key) == [], key
    assert rrs.schedules() == []
    assert rrs.drain() == []


def feedback_ref(request_id: str = RID, *, action: str = "feedback") -> str:
    keyring = Keyring.from_secret_string(json.dumps(KEYRING))
    # Issued on the handlers' pinned clock: a token from the future is refused (clock skew).
    return issue_token(
        keyring, subject=request_id, action=action, ttl_seconds=30 * 86_400, now=NOW.timestamp()
    )


# Authenticity ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "forge",
    [
        {"secret": "not-the-secret-at-all-0123456789"},
        {"signature": ""},
        {"signature": "t=123,v1=deadbeef"},
        {"timestamp": int(registry.now().timestamp()) - 3600},  # right secret, replayed an hour later
    ],
)
def test_a_forged_signature_writes_nothing(rrs: Rrs, forge: dict[str, Any]) -> None:
    rrs.put_customer()
    for body in (
        completion(),
        {"type": "contact.opted_out", "id": "e1", "contact": "ann@example.org"},
        {"type": "feedback.submitted", "id": "e2", "ref": feedback_ref(), "text": "awful"},
    ):
        response = call(url_event(body, **forge))
        assert response["statusCode"] == 401
        assert response_body(response)["error"]["code"] == "invalid_signature"
    nothing_written(rrs)


def test_a_tampered_body_is_refused(rrs: Rrs) -> None:
    event = url_event(completion())
    signature = event["headers"]["x-rrs-signature"]
    tampered = url_event(completion("cmp-evil"), signature=signature)
    assert call(tampered)["statusCode"] == 401
    nothing_written(rrs)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"not json", 400, "invalid_json"),
        ({"type": "job.completed", "id": "e"}, 400, "invalid_event"),
        ({"type": "party", "id": "e"}, 400, "invalid_event"),
        ({**completion(), "completed_at": "2026-06-10T09:00:00"}, 400, "invalid_event"),
        ({**completion(), "signal": {"rating": 9}}, 400, "invalid_event"),
        ({"type": "contact.opted_out", "id": "e", "contact": "12"}, 400, "invalid_contact"),
        (
            {"type": "feedback.submitted", "id": "e", "ref": "v1.k1.abc.def", "text": "x"},
            400,
            "invalid_reference",
        ),
    ],
)
def test_bad_input_is_a_4xx_json_error_and_changes_nothing(
    rrs: Rrs, body: dict[str, Any] | bytes, status: int, code: str
) -> None:
    response = call(url_event(body))
    assert response["statusCode"] == status
    assert response["headers"]["content-type"].startswith("application/json")
    assert response_body(response)["error"]["code"] == code
    nothing_written(rrs)


def test_only_post(rrs: Rrs) -> None:
    assert call(url_event(completion(), method="GET"))["statusCode"] == 405
    nothing_written(rrs)


# Completion --------------------------------------------------------------------------------


def test_a_completion_delivered_three_times_gives_one_request_and_one_schedule(rrs: Rrs) -> None:
    rrs.put_customer()
    answers = [response_body(call(url_event(completion()))) for _ in range(3)]
    assert [a["duplicate"] for a in answers] == [False, True, True]
    assert {a["request_id"] for a in answers} == {RID}
    assert [a["schedule_created"] for a in answers] == [True, False, False]

    requests = rrs.items("REQUESTS_TABLE")
    assert len(requests) == 1 and requests[0]["state"] == "scheduled"
    assert len(rrs.items("JOBS_TABLE")) == 1
    assert [e["event"] for e in rrs.audit(RID)] == ["intake"]
    schedules = rrs.schedules()
    assert [s["Name"] for s in schedules] == [RID]

    schedule = rrs.schedule(RID)
    # Completed 10:00 BST (09:00 UTC) + 2 h -> due 11:00 UTC, inside opening hours.
    assert requests[0]["due"] == "2026-06-10T11:00:00Z"
    assert schedule["ScheduleExpression"] == "at(2026-06-10T11:00:00)"
    assert schedule["ScheduleExpressionTimezone"] == "UTC"
    assert schedule["ActionAfterCompletion"] == "DELETE"
    assert schedule["Target"]["Arn"] == ENV["WORK_QUEUE_ARN"]
    assert schedule["Target"]["RoleArn"] == ENV["SCHEDULE_ROLE_ARN"]
    assert json.loads(schedule["Target"]["Input"]) == {"kind": "send", "request_id": RID, "v": 1}
    assert rrs.drain() == []  # nothing enqueued: the schedule sends at the due time


def test_a_redelivery_recreates_a_missing_schedule(rrs: Rrs) -> None:
    from handlers.common.aws_clients import client

    rrs.put_customer()
    call(url_event(completion()))
    client("scheduler").delete_schedule(GroupName="dev-rrs-requests", Name=RID)  # lost
    again = response_body(call(url_event(completion())))
    assert again["duplicate"] and again["schedule_created"]
    assert [s["Name"] for s in rrs.schedules()] == [RID]
    assert len(rrs.items("REQUESTS_TABLE")) == 1


def test_the_request_captures_signal_contact_and_the_customers_time_zone(rrs: Rrs) -> None:
    rrs.put_customer(timezone="America/New_York", prior_sentiment="neutral")
    call(url_event(completion(signal={"rating": 5, "notes": "Great job, thanks!"})))
    item = rrs.request(RID)
    assert item["channel"] == "email" and item["contact"] == "ann@example.org"
    assert item["signal"]["source"] == "event" and item["signal"]["rating"] == 5
    assert item["signal"]["prior_sentiment"] == "neutral"
    assert item["first_name"] == "Ann" and item["timezone"] == "America/New_York"
    # 11:00 UTC is 07:00 in New York: the ask waits for 09:00 there (13:00 UTC).
    assert item["due"] == "2026-06-10T13:00:00Z"
    assert int(item["expires_at"]) > int(NOW.timestamp()) + 399 * 86400
    job = rrs.items("JOBS_TABLE")[0]
    assert job["customer_id"] == "c-1" and job["job_ts"].startswith("2026-06-10T09:00:00Z#cmp-1")
    assert job["payload"]["completion_id"] == "cmp-1"


def test_an_opted_out_customer_gets_a_suppressed_request_and_no_schedule(rrs: Rrs) -> None:
    rrs.put_customer()
    opt = {"type": "contact.opted_out", "id": "o1", "contact": "07911 123456"}
    assert call(url_event(opt))["statusCode"] == 200
    answer = response_body(call(url_event(completion())))
    assert answer["state"] == "suppressed" and not answer["schedule_created"]
    item = rrs.request(RID)
    assert item["suppressed_reason"] == "opted_out"
    assert rrs.schedules() == []
    intake = rrs.audit(RID)[0]
    assert intake["facts"]["opted_out_contact"] == "+447911123456"


def test_a_person_make_forget_erased_is_asked_no_more_when_the_sheet_brings_them_back(rrs: Rrs) -> None:
    """make forget leaves only salted hashes on rrs-optout (handlers/review_requests/privacy.py);
    the sheet's next sync brings the row back, and the next job asks nobody."""
    from handlers.common.privacy import Person
    from handlers.review_requests.privacy import STORES

    assert STORES.remember is not None
    for _, row in STORES.remember(Person.of(email="ann@example.org"), FORGET_SALT):
        rrs.table("OPTOUT_TABLE").put_item(Item=row)
    assert "ann@example.org" not in json.dumps(rrs.table("OPTOUT_TABLE").scan()["Items"])
    rrs.put_customer()
    answer = response_body(call(url_event(completion())))
    assert answer["state"] == "suppressed" and not answer["schedule_created"]
    assert rrs.request(RID)["suppressed_reason"] == "opted_out"
    assert rrs.audit(RID)[0]["facts"]["opted_out_contact"].startswith("forgotten#")


def test_a_customer_without_contact_is_recorded_not_asked(rrs: Rrs) -> None:
    answer = response_body(call(url_event(completion(customer_id="c-unknown"))))
    assert answer["state"] == "suppressed"
    assert rrs.request(RID)["suppressed_reason"] == "no_usable_contact"
    assert rrs.schedules() == []


def test_contact_details_on_the_event_make_an_unknown_customer_reachable(rrs: Rrs) -> None:
    body = completion(
        customer_id="c-new", customer={"name": "Bo Li", "phone": "07400 123456", "channel": "sms"}
    )
    answer = response_body(call(url_event(body)))
    assert answer["state"] == "scheduled"
    item = rrs.request(RID)
    assert item["channel"] == "sms" and item["contact"] == "+447400123456"


# Opt-out and feedback ----------------------------------------------------------------------


def test_opt_out_is_normalised_and_kept_once(rrs: Rrs) -> None:
    first = response_body(
        call(url_event({"type": "contact.opted_out", "id": "a", "contact": " Ann@Example.ORG "}))
    )
    again = response_body(
        call(url_event({"type": "contact.opted_out", "id": "b", "contact": "ann@example.org"}))
    )
    assert (first["already_opted_out"], again["already_opted_out"]) == (False, True)
    rows = rrs.items("OPTOUT_TABLE")
    assert [(r["contact"], r["event_id"]) for r in rows] == [("ann@example.org", "a")]


def test_private_feedback_is_audited_and_escalated_once_per_event(rrs: Rrs) -> None:
    rrs.put_customer()
    call(url_event(completion()))
    feedback = {
        "type": "feedback.submitted",
        "id": "fb-1",
        "ref": feedback_ref(),
        "text": "The engineer left a mess.",
        "rating": 2,
        "submitted_at": "2026-06-10T15:00:00Z",
    }
    first = call(url_event(feedback))
    second = call(url_event(feedback))
    assert first["statusCode"] == second["statusCode"] == 202
    entries = [e for e in rrs.audit(RID) if e["event"] == "feedback"]
    assert len(entries) == 1
    assert entries[0]["facts"]["text"] == "The engineer left a mess."
    assert entries[0]["ts"] == "2026-06-10T15:00:00.000000Z#feedback#fb-1"
    assert rrs.sends() == []
    messages = rrs.escalations()
    assert messages == 2 * [
        {
            "kind": "escalate",
            "request_id": RID,
            "reason": "private_feedback",
            "dedupe_key": "feedback-fb-1",
            "v": 1,
        }
    ]


def test_the_request_its_job_and_its_audit_entries_expire_after_retention_days(rrs: Rrs) -> None:
    """Issue 42: rrs-jobs and rrs-audit used to keep everything without an end; each item now
    carries its TTL attribute, retentionDays after it was written (the job with its request)."""
    rrs.put_customer()
    call(url_event(completion()))
    feedback = {"type": "feedback.submitted", "id": "fb-1", "ref": feedback_ref(), "text": "ok",
                "rating": 4, "submitted_at": "2026-06-10T15:00:00Z"}
    call(url_event(feedback))
    days = int(ENV["RETENTION_DAYS"])
    request = rrs.items("REQUESTS_TABLE")[0]
    assert int(request["expires_at"]) == int(rrs.now.timestamp()) + days * 86400
    (job,) = rrs.items("JOBS_TABLE")
    assert job["expires_at"] == request["expires_at"]
    entries = rrs.audit(RID)
    assert len(entries) == 2  # intake and feedback
    for entry in entries:
        written = dt.datetime.fromisoformat(str(entry["at"]).replace("Z", "+00:00"))
        assert int(entry["expires_at"]) == int(written.timestamp()) + days * 86400


def _short_ref(issue: Callable[..., str]) -> str:
    keyring = Keyring.from_secret_string(json.dumps(KEYRING))
    return issue(keyring, subject=ref_subject(RID), action="feedback", ttl_seconds=30 * 86_400,
                 now=NOW.timestamp())


@pytest.mark.parametrize(
    "ref",
    [feedback_ref, lambda: _short_ref(issue_s1_short_token), lambda: _short_ref(issue_short_token)],
    ids=["full, sent before short refs", "short, sent before the compact form", "compact"],
)
def test_feedback_is_taken_from_every_link_form_still_in_customers_hands(rrs: Rrs, ref: Callable[[], str]) -> None:
    rrs.put_customer()
    call(url_event(completion()))
    answer = call(url_event({"type": "feedback.submitted", "id": "fb-2", "ref": ref(), "text": "Late."}))
    assert answer["statusCode"] == 202, answer
    assert [e["facts"]["text"] for e in rrs.audit(RID) if e["event"] == "feedback"] == ["Late."]


@pytest.mark.parametrize(
    "ref",
    [
        lambda: feedback_ref(action="addlink"),
        lambda: feedback_ref()[:-4] + "AAAA",
        lambda: issue_token(
            Keyring.single("k1", "z" * 40),
            subject=RID,
            action="feedback",
            ttl_seconds=60,
            now=registry.now().timestamp(),
        ),
    ],
)
def test_feedback_with_a_forged_reference_writes_nothing(rrs: Rrs, ref: Callable[[], str]) -> None:
    rrs.put_customer()
    call(url_event(completion()))
    before = rrs.audit(RID)
    response = call(
        url_event({"type": "feedback.submitted", "id": "f", "ref": ref(), "text": "hi"})
    )
    assert response["statusCode"] == 400
    assert rrs.audit(RID) == before and rrs.drain() == []


def test_feedback_for_an_unknown_request_is_404(rrs: Rrs) -> None:
    response = call(
        url_event(
            {"type": "feedback.submitted", "id": "f", "ref": feedback_ref("rq-nope"), "text": "hi"}
        )
    )
    assert response["statusCode"] == 404
    nothing_written(rrs)


def test_queue_name_matches_env(rrs: Rrs) -> None:
    assert ENV["WORK_QUEUE_URL"].endswith(QUEUE)
    assert ENV["ESCALATIONS_QUEUE_URL"].endswith(ESCALATIONS)
    assert dt.timedelta(hours=2) == dt.timedelta(hours=int(ENV["REQUEST_DELAY_HOURS"]))
