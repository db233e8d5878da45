"""ler-retry: dead letters re-driven or parked, pending leads sent round again within the budget."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.lead_enricher.dead_letters import MAX_REDRIVES, classify
from handlers.lead_enricher.enrich_cache import PendingMarkers
from handlers.lead_enricher.functions import retry
from handlers.lead_enricher.lead import Contact, Lead
from handlers.lead_enricher.redrive import RetryJob
from tests.handlers.ler.conftest import (
    CACHE,
    NOW,
    Ler,
    RecordingInvoker,
    context,
    event,
    junk_lead,
    mark_pending,
)

# ler-junk-writer --------------------------------------------------------------------------


# ler-digest ---------------------------------------------------------------------------------


# ler-retry ----------------------------------------------------------------------------------


def on_failure(payload: dict[str, Any], function: str = "dev-ler-dedupe") -> str:
    """What Lambda sends to an on-failure destination after the async retries."""
    return json.dumps(
        {
            "version": "1.0",
            "timestamp": "2026-11-28T10:00:00.000Z",
            "requestContext": {
                "requestId": "r-1",
                "functionArn": f"arn:aws:lambda:eu-west-2:123456789012:function:{function}:$LATEST",
                "condition": "RetriesExhausted",
                "approximateInvokeCount": 2,
            },
            "requestPayload": payload,
            "responseContext": {"statusCode": 200, "functionError": "Unhandled"},
            "responsePayload": {"errorMessage": "boom"},
        }
    )


def s3_event(key: str) -> dict[str, Any]:
    return {
        "Records": [
            {"eventSource": "aws:s3", "s3": {"bucket": {"name": "raw"}, "object": {"key": key}}}
        ]
    }


def test_dead_letters_are_understood_and_counted() -> None:
    lead = junk_lead("f-1", "x")
    target_dlq = classify(json.dumps(event("le.enriched", lead)))
    assert (target_dlq.kind, target_dlq.redrives, target_dlq.payload["detail"]["redrives"]) == (
        "event",
        0,
        1,
    )
    wrapped = classify(on_failure(event("le.clean", lead)))
    assert (wrapped.kind, wrapped.origin.split(":")[6]) == ("event", "dev-ler-dedupe")
    s3 = classify(on_failure({**s3_event("upload/a.csv"), "redrives": 2}, "dev-ler-intake"))
    assert (s3.kind, s3.redrives, s3.payload["redrives"]) == ("s3", 2, 3)
    assert classify(on_failure({"job": "ler-digest"})).kind == "scheduled"
    assert classify("not json").kind == "unknown"
    assert classify(json.dumps(lead.to_json()), intake_queue=True).kind == "lead"
    tired = json.loads(json.dumps(event("le.enriched", lead)))
    tired["detail"]["redrives"] = MAX_REDRIVES
    assert classify(json.dumps(tired)).exhausted


@pytest.fixture
def retry_job(ler: Ler, invoker: RecordingInvoker) -> RetryJob:
    """ler-retry's own job: the recording invoker, the clock at ``NOW``."""
    registry.override(clock=lambda: NOW)
    job: RetryJob = registry.service(retry)
    return job


def send(ler: Ler, queue: str, body: str, **attributes: str) -> None:
    ler.clients["sqs"].send_message(
        QueueUrl=ler.urls[queue],
        MessageBody=body,
        MessageAttributes={
            k: {"DataType": "String", "StringValue": v} for k, v in attributes.items()
        },
    )


def test_retry_re_drives_each_kind_of_dead_letter(
    ler: Ler, retry_job: RetryJob, invoker: RecordingInvoker
) -> None:
    lead = junk_lead("f-1", "x")
    send(
        ler,
        "dlq",
        json.dumps(event("le.enriched", lead)),
        RULE_ARN="arn:aws:events:eu-west-2:1:rule/dev-ler-on-enriched",
    )
    send(ler, "dlq", on_failure(event("le.clean", lead), "dev-ler-push"))
    send(ler, "dlq", on_failure(s3_event("inbound/m-1"), "dev-ler-intake"))
    send(ler, "dlq", on_failure({"job": "ler-backfill"}, "dev-ler-backfill"))
    send(ler, "intake_dlq", json.dumps(lead.to_json()))

    report = retry.handler({"job": "ler-retry"}, context())
    assert report == {
        "redriven": 4,
        "dropped": 1,
        "parked": 0,
        "pending_retried": 0,
        "backlog": 0,
        "alerted": False,
    }
    emitted = sorted((e["detail-type"], e["detail"]["redrives"]) for e in ler.emitted())
    assert emitted == [("le.clean", 1), ("le.enriched", 1)]
    assert invoker.calls == [("dev-ler-intake", {**s3_event("inbound/m-1"), "redrives": 1})]
    [back] = ler.queued()
    assert json.loads(back)["redrives"] == 1 and json.loads(back)["lead_id"] == "f-1"
    assert ler.sent_mail() == []


def test_a_letter_that_keeps_failing_is_parked_and_alerted(ler: Ler, retry_job: RetryJob) -> None:
    tired = event("le.enriched", junk_lead("f-1", "x"))
    tired["detail"]["redrives"] = MAX_REDRIVES
    send(ler, "dlq", json.dumps(tired))
    send(ler, "dlq", "garbage")
    report = retry.handler({"job": "ler-retry"}, context())
    assert (report["redriven"], report["parked"], report["alerted"]) == (0, 2, True)
    assert ler.emitted() == []
    [mail] = ler.sent_mail()
    assert mail.destinations["ToAddresses"] == ["ops@example.com"]
    assert "Dead letters parked this run: 2" in mail.body
    # Parked letters stay in the queue (hidden), for a human.
    attributes = ler.clients["sqs"].get_queue_attributes(
        QueueUrl=ler.urls["dlq"], AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "2"


def test_retry_sends_pending_leads_round_again_within_its_budget(
    ler: Ler, retry_job: RetryJob
) -> None:
    mark_pending(0, NOW - dt.timedelta(minutes=20), "f-old")
    mark_pending(0, NOW - dt.timedelta(minutes=2), "f-fresh")  # may still be in flight
    mark_pending(3, NOW - dt.timedelta(hours=2), "f-tired")  # past the budget: backfill's
    assert retry_job.retry_pending() == 1
    [emitted] = ler.emitted()
    assert (emitted["detail-type"], emitted["detail"]["lead_id"], emitted["detail"]["pass_no"]) == (
        "le.normalized",
        "f-old",
        1,
    )
    assert emitted["detail"]["enrichment"] is None


# ler-backfill -----------------------------------------------------------------------------


def test_retry_waits_for_a_throttled_providers_window(ler: Ler, retry_job: RetryJob) -> None:
    from handlers.lead_enricher.contract import NORMALIZED

    def throttled(lead_id: str, retry_at: dt.datetime) -> None:
        lead = Lead(
            lead_id=lead_id,
            lane="form",
            received_at=NOW.isoformat(),
            contact=Contact(email="a@acme.co.uk"),
        )
        PendingMarkers(CACHE).mark(lead, "429", NOW - dt.timedelta(minutes=20), retry_at)

    throttled("f-later", NOW + dt.timedelta(hours=1))
    throttled("f-due", NOW - dt.timedelta(minutes=1))
    assert retry_job.retry_pending() == 1
    [emitted] = ler.emitted()
    assert (emitted["detail-type"], emitted["detail"]["lead_id"]) == (NORMALIZED, "f-due")
