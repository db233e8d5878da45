"""A model Bedrock refuses is never silent in rrs: counted, noted, and named in an owner mail.

On a fresh account Bedrock answers ``AccessDeniedException`` until model access is enabled
(Bedrock User Guide, "Access Amazon Bedrock foundation models":
https://docs.aws.amazon.com/bedrock/latest/userguide/model-access.html). rrs-sender then grades
by the rules and writes from the template; the refusal is counted (``ModelRefused``, alarmed
through ``Degraded``) and noted in rrs-requests (``degraded#ModelRefused#rrs-sender``).
rrs-sweep asks for the owner's notice once per business day while new notes come, and
rrs-escalator mails it, de-duplicated like a handover.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from handlers.common.degradations import BEDROCK_ACCESS_PAGE
from handlers.review_requests.domain import request_id_for
from handlers.review_requests.functions import escalator, webhook
from handlers.review_requests.functions import sender as sender_module
from handlers.review_requests.functions import sweep as sweep_module
from tests.handlers.rrs.conftest import ENV, OWNER, Rrs, completion, sqs_event, url_event
from testsupport.metrics import count_metrics, emitted

MODEL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"  # the dev stack's grade and compose model
NOTE = {"request_id": "degraded#ModelRefused#rrs-sender"}
DUE = dt.datetime(2026, 6, 10, 11, 0, tzinfo=dt.UTC)  # 12:00 in London
NOTICE = {
    "kind": "escalate",
    "request_id": "owner-notices",
    "reason": "degraded",
    "dedupe_key": "degraded-2026-06-10",
    "v": 1,
}


def refused_ask(rrs: Rrs, completion_id: str, at: dt.datetime) -> str:
    """One completion, asked at ``at`` while Bedrock refuses both calls; returns the outcome
    recorded on the request."""
    rrs.now = at - dt.timedelta(hours=2)
    webhook.handler(url_event(completion(completion_id, completed_at=rrs.now)), None)
    rrs.now = at
    rrs.bedrock.add_error("AccessDeniedException", "You don't have access to the model")
    rrs.bedrock.add_error("AccessDeniedException", "You don't have access to the model")
    request_id = request_id_for(completion_id)
    sender_module.handler(sqs_event({"kind": "send", "request_id": request_id}), None)
    return str(rrs.request(request_id)["state"])


def owner_mail(rrs: Rrs) -> list[Any]:
    return [e for e in rrs.emails() if e.destinations["ToAddresses"] == [OWNER]]


def deployer_mail(rrs: Rrs) -> list[Any]:
    return [e for e in rrs.emails() if e.destinations["ToAddresses"] == [ENV["ALERT_EMAIL"]]]


def sweep() -> dict[str, Any]:
    answer: dict[str, Any] = sweep_module.handler({}, None)
    return answer


@pytest.fixture
def metrics_on(monkeypatch: pytest.MonkeyPatch) -> None:
    count_metrics(monkeypatch, "rrs-sender")


def test_a_refused_model_is_counted_and_noted_with_the_model(
    rrs: Rrs, metrics_on: None, capsys: pytest.CaptureFixture[str]
) -> None:
    rrs.put_customer()
    capsys.readouterr()
    # The rules grade (never happy without a model), so the customer gets the feedback form.
    assert refused_ask(rrs, "cmp-1", DUE) == "diverted"
    counted = emitted(capsys.readouterr().out)
    assert counted.count(("ModelRefused", 1.0, {"service": "rrs", "function": "rrs-sender"})) == 2
    note = rrs.table("REQUESTS_TABLE").get_item(Key=NOTE)["Item"]
    assert (note["calls"], note["first_at"], note["detail"]) == (2, int(DUE.timestamp()), MODEL)
    assert note["expires_at"] > DUE.timestamp()  # the table's TTL removes it once fixed
    assert "state" not in note  # so the sweep's state-due index never lists it


def test_the_deployer_gets_the_fix_and_the_owner_what_it_changes_once_a_day(rrs: Rrs) -> None:
    """#40: the owner cannot act in the Bedrock console; whoever deployed the stack can."""
    rrs.put_customer()
    refused_ask(rrs, "cmp-1", DUE)
    refused_ask(rrs, "cmp-2", DUE + dt.timedelta(minutes=30))

    rrs.now = DUE + dt.timedelta(hours=1)
    assert sweep()["degraded_notice"] == 1
    [message] = [m for m in rrs.escalations() if m["reason"] == "degraded"]
    assert message == NOTICE
    # SQS delivers at least once: the escalator mails once for two copies.
    assert escalator.handler(sqs_event(message, message), None) == {"batchItemFailures": []}
    [fix] = deployer_mail(rrs)
    assert fix.subject == "[Example Home Services] rrs: Bedrock refuses its model in eu-west-2"
    text = fix.body
    assert f"Model refused ({MODEL}) in rrs-sender: 4 times since 10 Jun 2026 12:00" in text
    assert "last 10 Jun 2026 12:30 (Europe/London)" in text
    assert "nobody is asked for a public review" in text
    assert "https://eu-west-2.console.aws.amazon.com/bedrock/home?region=eu-west-2#/model-catalog" in text
    assert ("aws bedrock get-foundation-model-availability --model-id "
            "anthropic.claude-haiku-4-5-20251001-v1:0 --region eu-west-2") in text
    assert BEDROCK_ACCESS_PAGE in text
    [mail] = owner_mail(rrs)
    assert mail.subject == "[Example Home Services] Review requests use the standard wording today"
    said = mail.body
    assert "offered the private feedback form instead of being asked for a public review" in said
    assert f"The fix has gone to {ENV['ALERT_EMAIL']}" in said and "Since 10 Jun 2026 12:00" in said
    for engineering in ("Bedrock", "console", "model", "Region", "AccessDenied", "aws "):
        assert engineering not in said, engineering

    # More refusals the same day: the sweep asks again tomorrow, not every 15 minutes.
    refused_ask(rrs, "cmp-3", DUE + dt.timedelta(hours=2))
    rrs.now = DUE + dt.timedelta(hours=3)
    assert sweep()["degraded_notice"] == 0
    assert not [m for m in rrs.escalations() if m["reason"] == "degraded"]

    rrs.now = DUE + dt.timedelta(days=1)
    assert sweep()["degraded_notice"] == 1
    [tomorrow] = [m for m in rrs.escalations() if m["reason"] == "degraded"]
    assert tomorrow["dedupe_key"] == "degraded-2026-06-11"
    escalator.handler(sqs_event(tomorrow), None)
    assert len(owner_mail(rrs)) == len(deployer_mail(rrs)) == 2
    assert "6 times since 10 Jun 2026 12:00" in deployer_mail(rrs)[-1].body


def test_no_notice_once_the_refusals_stop(rrs: Rrs) -> None:
    rrs.put_customer()
    refused_ask(rrs, "cmp-1", DUE)
    rrs.now = DUE + dt.timedelta(hours=1)
    assert sweep()["degraded_notice"] == 1
    rrs.escalations()
    for days in (1, 2):  # access enabled: no new note, so no more mail
        rrs.now = DUE + dt.timedelta(days=days)
        assert sweep()["degraded_notice"] == 0


def test_nothing_is_asked_for_without_a_refusal_or_outside_opening_hours(rrs: Rrs) -> None:
    rrs.now = DUE
    assert sweep()["degraded_notice"] == 0
    assert "Item" not in rrs.table("REQUESTS_TABLE").get_item(Key=NOTE)
    rrs.put_customer()
    refused_ask(rrs, "cmp-1", DUE)
    rrs.now = dt.datetime(2026, 6, 10, 20, 0, tzinfo=dt.UTC)  # 21:00 London: closed
    assert sweep() == {"skipped": "outside_opening_hours"}
    assert rrs.escalations() == []
    assert ENV["REQUESTS_TABLE"].endswith("rrs-requests")
