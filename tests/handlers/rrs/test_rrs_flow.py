"""The whole path on moto: completion -> schedule fires -> sender -> feedback -> escalator."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from handlers.review_requests.domain import request_id_for
from handlers.review_requests.functions import escalator, webhook
from handlers.review_requests.functions import sender as sender_module
from tests.handlers.rrs.conftest import (
    FEEDBACK_URL,
    REVIEW_URL,
    Rrs,
    completion,
    draft_answer,
    grade_answer,
    sqs_event,
    url_event,
)
from testsupport.metrics import count_metrics, emitted


def fire(rrs: Rrs, request_id: str) -> dict[str, Any]:
    """What EventBridge Scheduler does at the due time: send the target input to rrs-work."""
    schedule = rrs.schedule(request_id)
    return dict(json.loads(schedule["Target"]["Input"]))


def test_two_customers_one_happy_one_not(rrs: Rrs) -> None:
    rrs.put_customer("c-1")
    rrs.put_customer(
        "c-2", name="Bob Jones", email="bob@example.org", phone=None, prior_sentiment="negative"
    )
    webhook.handler(url_event(completion("cmp-1", customer_id="c-1", signal={"rating": 5})), None)
    webhook.handler(
        url_event(
            completion("cmp-2", customer_id="c-2", signal={"notes": "Had to come back twice"})
        ),
        None,
    )
    happy, unhappy = request_id_for("cmp-1"), request_id_for("cmp-2")

    rrs.now = dt.datetime(2026, 6, 10, 11, 0, tzinfo=dt.UTC)
    rrs.bedrock.add_tool_answer(grade_answer("happy")).add_tool_answer(
        draft_answer(
            "Hi Ann, thanks for choosing us for your boiler service. A short review would mean a lot to us."
        )
    )
    rrs.bedrock.add_tool_answer(grade_answer("unhappy")).add_tool_answer(
        draft_answer(
            "Hi Bob, thanks for choosing us. We'd value your honest thoughts on how the visit went.",
            "How did it go?",
        )
    )
    assert sender_module.handler(sqs_event(fire(rrs, happy), fire(rrs, unhappy)), None) == {
        "batchItemFailures": []
    }

    to_ann, to_bob = rrs.emails()
    assert REVIEW_URL in to_ann.body and REVIEW_URL not in to_bob.body
    # moto keeps the HTML part of a mail that has one: the link is its button's href.
    feedback_link = html.unescape(re.findall(re.escape(FEEDBACK_URL) + r"[^'\"\s<]*", to_bob.body)[0])
    ref = parse_qs(urlsplit(feedback_link).query)["ref"][0]
    assert (rrs.request(happy)["state"], rrs.request(unhappy)["state"]) == ("asked", "diverted")

    # Bob uses the private link; the tool posts the form with the ref it carried.
    rrs.now += dt.timedelta(hours=2)
    posted = {"type": "feedback.submitted", "id": "fb-1", "ref": ref, "text": "Still leaking."}
    assert webhook.handler(url_event(posted), None)["statusCode"] == 202
    assert escalator.handler(sqs_event(*rrs.drain()), None) == {"batchItemFailures": []}
    handovers = [e for e in rrs.emails() if e.destinations["ToAddresses"] == ["owner@example.com"]]
    assert len(handovers) == 2 and all("Bob Jones" in e.subject for e in handovers)
    assert "Still leaking." in handovers[-1].body

    for request_id in (happy, unhappy):
        events = [e["event"] for e in rrs.audit(request_id)]
        assert {"intake", "grade", "message", "delivered"} <= set(events)


def _checked(event: dict[str, Any]) -> dict[str, Any]:
    return {**event, "headers": {**event["headers"], "x-crm-check": "1"}}


def test_a_check_job_is_scheduled_marked_and_never_sent(rrs: Rrs) -> None:
    """make verify's job event goes the real way to a schedule; when it fires, nobody is asked."""
    rrs.put_customer("c-1")
    forged = _checked(url_event(completion("cmp-check"), secret="not-the-tools-secret"))
    assert webhook.handler(forged, None)["statusCode"] == 401  # the mark skips no check
    answer = webhook.handler(_checked(url_event(completion("cmp-check"))), None)
    assert answer["statusCode"] == 200
    request_id = request_id_for("cmp-check")
    request = rrs.request(request_id)
    assert request["check"] is True and request["state"] == "scheduled"
    assert request["expires_at"] <= int((rrs.now + dt.timedelta(days=1)).timestamp())
    rrs.now = dt.datetime(2026, 6, 10, 11, 0, tzinfo=dt.UTC)
    assert sender_module.handler(sqs_event(fire(rrs, request_id)), None) == {"batchItemFailures": []}
    assert rrs.emails() == [] and rrs.sms == []
    assert rrs.request(request_id)["state"] == "suppressed"
    assert rrs.request(request_id)["suppressed_reason"] == "check"


def _requests_counted(out: str) -> list[tuple[str, float, dict[str, Any]]]:
    """The business metrics (EMF lines) of rrs in ``out``."""
    return [m for m in emitted(out) if m[0] in ("Requests", "Asks", "Escalations")]


def test_a_check_job_counts_in_no_business_metric(
    rrs: Rrs, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """make verify's job, suppressed at intake or when its schedule fires: zero; the same
    outcomes of a real job: one each."""
    count_metrics(monkeypatch)
    suppressed = ("Requests", 1.0, {"service": "rrs", "state": "suppressed"})
    rrs.put_customer("c-1")
    rrs.put_customer("c-9", email=None, phone=None)  # no contact: suppressed at intake
    capsys.readouterr()

    webhook.handler(_checked(url_event(completion("cmp-check-1", customer_id="c-9"))), None)
    webhook.handler(_checked(url_event(completion("cmp-check-2"))), None)
    rrs.now = dt.datetime(2026, 6, 10, 11, 0, tzinfo=dt.UTC)
    sender_module.handler(sqs_event(fire(rrs, request_id_for("cmp-check-2"))), None)
    assert rrs.request(request_id_for("cmp-check-2"))["suppressed_reason"] == "check"
    assert _requests_counted(capsys.readouterr().out) == []

    webhook.handler(url_event(completion("cmp-real-1", customer_id="c-9")), None)
    assert _requests_counted(capsys.readouterr().out) == [suppressed]
    webhook.handler(url_event(completion("cmp-real-2")), None)
    rrs.table("OPTOUT_TABLE").put_item(Item={"contact": "ann@example.org", "source": "test"})
    sender_module.handler(sqs_event(fire(rrs, request_id_for("cmp-real-2"))), None)
    assert _requests_counted(capsys.readouterr().out) == [suppressed]
