"""rrs-sender's claim under races and crashes (issue #27, findings 1 and 2).

* An opt-out stored while the two model calls run (after the sender's first read of rrs-optout,
  before its claim) wins: the claim's transaction checks the opt-out items' absence itself.
* A sender that dies between its claim and the confirmed send leaves a request ``asked`` with
  no ``delivered``: rrs-sweep reports it (metric, the owner's handover with what to do) once,
  and never sends it again.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from handlers.common import metrics
from handlers.review_requests.domain import request_id_for
from handlers.review_requests.functions import escalator as escalator_module
from handlers.review_requests.functions import sender as sender_module
from handlers.review_requests.functions import sweep as sweep_module
from handlers.review_requests.functions import webhook
from tests.handlers.rrs.conftest import (
    GOOD_EMAIL_DRAFT,
    OWNER,
    Rrs,
    completion,
    draft_answer,
    grade_answer,
    sqs_event,
    url_event,
)
from testsupport.metrics import count_metrics

RID = request_id_for("cmp-1")
SEND = {"kind": "send", "request_id": RID}
DUE = dt.datetime(2026, 6, 10, 11, 0, tzinfo=dt.UTC)


class Crash(BaseException):
    """The process dies here: nothing after this point runs (not even ``except Exception``)."""


@pytest.fixture
def scheduled(rrs: Rrs) -> Rrs:
    rrs.put_customer()
    event = completion(signal={"rating": 5, "notes": "Spotless, thanks"})
    assert webhook.handler(url_event(event), None)["statusCode"] == 200
    rrs.now = DUE
    return rrs


def send() -> dict[str, Any]:
    answer: dict[str, Any] = sender_module.handler(sqs_event(SEND), None)
    return answer


def events(rrs: Rrs) -> list[str]:
    return [e["event"] for e in rrs.audit(RID)]


def test_an_opt_out_stored_while_the_models_run_wins_over_the_claim(
    scheduled: Rrs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found on a1a1316: the claim was conditioned on the request's state only (10 of 24)."""
    scheduled.bedrock.add_tool_answer(grade_answer("happy"))
    scheduled.bedrock.add_tool_answer(draft_answer(GOOD_EMAIL_DRAFT))
    converse = scheduled.bedrock.converse
    answered: list[dict[str, Any]] = []

    def compose_then_opt_out(**kwargs: Any) -> dict[str, Any]:
        answer = converse(**kwargs)
        if len(scheduled.bedrock.calls) == 2:  # the compose call: the claim comes next
            optout = {"type": "contact.opted_out", "id": "o-race", "contact": "ann@example.org"}
            answered.append(webhook.handler(url_event(optout), None))
        return answer

    monkeypatch.setattr(scheduled.bedrock, "converse", compose_then_opt_out)
    assert send() == {"batchItemFailures": []}

    assert [a["statusCode"] for a in answered] == [200]  # the opt-out was acknowledged
    assert scheduled.emails() == [] and scheduled.sms == []
    item = scheduled.request(RID)
    assert (item["state"], item["suppressed_reason"]) == ("suppressed", "opted_out")
    assert "message" not in events(scheduled)


# Crashes between the claim and the confirmed send ------------------------------------------


def crash_at(monkeypatch: pytest.MonkeyPatch, point: str) -> None:
    """Kill the sender at ``point``: right after the claim, or inside the send call."""
    if point == "after_claim":
        from handlers.review_requests import sending
        from handlers.review_requests.store import Finish, finish_with_audit

        real = finish_with_audit

        def claim_then_die(*args: Any, **kwargs: Any) -> Finish:
            won = real(*args, **kwargs)
            if won and kwargs.get("new_state") is not None and kwargs["new_state"].value != "suppressed":
                raise Crash(point)
            return won

        monkeypatch.setattr(sending, "finish_with_audit", claim_then_die)
    else:
        from handlers.review_requests.messaging import AwsMessenger

        def die(self: Any, message: Any) -> str:
            raise Crash(point)

        monkeypatch.setattr(AwsMessenger, "send", die)


@pytest.mark.parametrize("point", ["after_claim", "before_send"])
def test_a_sender_dying_after_its_claim_is_reported_once_and_never_resent(
    scheduled: Rrs, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], point: str
) -> None:
    """Found on a1a1316: the request stayed ``asked`` without ``delivered`` and nothing looked."""
    # The dev stack runs without business metrics (businessMetrics: false); prod counts this.
    count_metrics(monkeypatch)
    scheduled.bedrock.add_tool_answer(grade_answer("happy"))
    scheduled.bedrock.add_tool_answer(draft_answer(GOOD_EMAIL_DRAFT))
    with monkeypatch.context() as patch:
        crash_at(patch, point)
        with pytest.raises(Crash):
            send()
    assert scheduled.request(RID)["state"] == "asked" and scheduled.emails() == []
    capsys.readouterr()

    scheduled.now = DUE + dt.timedelta(minutes=5)  # inside the bound: not yet a lost message
    sweep_module.handler({}, None)
    assert scheduled.escalations() == []

    scheduled.now = DUE + dt.timedelta(minutes=45)
    result = sweep_module.handler({}, None)
    assert result["unconfirmed"] == 1
    counted = [
        (name, value)
        for line in capsys.readouterr().out.splitlines()
        for (_ns, name, value, _dims) in metrics.emf_metrics(line)
        if name == "UnconfirmedAsks"
    ]
    assert counted == [("UnconfirmedAsks", 1)]
    [escalation] = scheduled.escalations()
    assert escalation["reason"] == "unconfirmed_send"

    # The owner is told, with what to do; the customer is not asked again.
    assert escalator_module.handler(sqs_event(escalation), None) == {"batchItemFailures": []}
    [handover] = scheduled.emails()
    assert handover.destinations["ToAddresses"] == [OWNER]
    assert "never confirmed" in handover.body and "will not be sent again" in handover.body
    assert GOOD_EMAIL_DRAFT[:40] in handover.body  # the message as it was claimed

    # A later sweep reports it no more, and nothing is re-driven.
    scheduled.now = DUE + dt.timedelta(hours=2)
    assert sweep_module.handler({}, None)["unconfirmed"] == 0
    assert scheduled.drain() == []
    assert scheduled.request(RID)["state"] == "asked"


def test_a_confirmed_send_is_never_reported(scheduled: Rrs) -> None:
    scheduled.bedrock.add_tool_answer(grade_answer("happy"))
    scheduled.bedrock.add_tool_answer(draft_answer(GOOD_EMAIL_DRAFT))
    assert send() == {"batchItemFailures": []}
    assert scheduled.request(RID)["delivered_at"]
    scheduled.now = DUE + dt.timedelta(hours=2)
    assert sweep_module.handler({}, None)["unconfirmed"] == 0
    assert scheduled.escalations() == []
