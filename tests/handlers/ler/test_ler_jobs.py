"""ler-junk-writer and the three scheduled jobs: retry, backfill, digest."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.lead_enricher.backfilling import Backfill
from handlers.lead_enricher.dead_letters import MAX_REDRIVES, classify
from handlers.lead_enricher.enrich_cache import PendingMarkers
from handlers.lead_enricher.events import EventBridgeSink
from handlers.lead_enricher.functions import backfill, digest, junk_writer, retry
from handlers.lead_enricher.lead import Contact, Lead, Screening
from handlers.lead_enricher.redrive import RetryJob
from tests.handlers.ler.conftest import (
    CACHE,
    JUNK_BUCKET,
    InProcessSyncer,
    Ler,
    RecordingInvoker,
    context,
)

NOW = dt.datetime(2026, 11, 28, 10, 0, tzinfo=dt.UTC)


def junk_lead(lead_id: str, reason: str, received: str = "2026-11-27T23:59:00+00:00") -> Lead:
    return Lead(
        lead_id=lead_id,
        lane="form",
        received_at=received,
        contact=Contact(email=f"{lead_id}@spam.example"),
        message="Buy backlinks now",
        screening=Screening(decision="junk", reason=reason),
    )


def event(detail_type: str, lead: Lead) -> dict[str, Any]:
    return {
        "version": "0",
        "id": f"evt-{lead.lead_id}",
        "detail-type": detail_type,
        "source": "crm.dev.ler",
        "account": "123456789012",
        "time": "2026-11-28T10:00:00Z",
        "region": "eu-west-2",
        "resources": [],
        "detail": lead.to_json(),
    }


# ler-junk-writer --------------------------------------------------------------------------


def test_the_junk_writer_keeps_one_object_per_lead(ler: Ler) -> None:
    first = junk_writer.handler(event("le.junk", junk_lead("f-1", "spam_phrases")), context())
    again = junk_writer.handler(event("le.junk", junk_lead("f-1", "spam_phrases")), context())
    assert first == again == {"key": "junk/2026-11-27/f-1.json"}
    [entry] = ler.objects(JUNK_BUCKET, "junk/").values()
    assert (entry["reason"], entry["stage"], entry["lead"]["message"]) == (
        "spam_phrases",
        "filter",
        "Buy backlinks now",
    )


# ler-digest ---------------------------------------------------------------------------------


def test_the_digest_counts_yesterdays_drops_by_reason(ler: Ler) -> None:
    for lead_id, reason in (("f-1", "honeypot"), ("f-2", "honeypot"), ("f-3", "many_links")):
        junk_writer.handler(event("le.junk", junk_lead(lead_id, reason)), context())
    junk_writer.handler(
        event("le.junk", junk_lead("f-4", "honeypot", "2026-11-28T00:01:00+00:00")), context()
    )
    summary = digest.handler({"day": "2026-11-28"}, context())
    assert summary == {
        "day": "2026-11-27",
        "total": 3,
        "by_reason": {"honeypot": 2, "many_links": 1},
    }
    [mail] = ler.sent_mail()
    assert mail.source == "crm-bot@example.com"
    assert mail.subject == "Lead enricher: 3 junk leads dropped on Fri 27 Nov 2026"
    assert "Filled in the hidden anti-robot field (honeypot): 2</h2>" in mail.body  # the HTML part
    assert "<strong>f-1@spam.example</strong>, by web form" in mail.body
    assert "junk/2026-11-27/" in mail.body


def test_the_digest_text_part_names_every_reason_in_words_and_cuts_no_line_mid_word() -> None:
    import datetime as dt

    from handlers.lead_enricher.junk_digest import summarise

    long = "We offer guest posts on high authority sites " * 10
    entries = [
        ("junk/2026-11-27/f-1.json",
         {"reason": "honeypot", "lane": "form", "lead": {"fields": {"email": "f-1@spam.example"},
                                                          "message": "Buy backlinks now"}}),
        ("junk/2026-11-27/m-2.json",
         {"reason": "spam_phrases", "lane": "mail", "lead": {"contact": {"email": "seo@agency.example"},
                                                              "message": long}}),
    ]
    text = summarise(dt.date(2026, 11, 27), entries).text()
    lines = text.splitlines()
    assert lines[2:4] == [
        "Filled in the hidden anti-robot field (honeypot): 1",
        '  - f-1@spam.example, by web form: "Buy backlinks now"',
    ]
    [cut] = [line for line in lines if "seo@agency.example" in line]
    assert cut.endswith('posts on..."') and len(cut) < 220  # whole words only


def test_a_quiet_day_still_sends_a_digest(ler: Ler) -> None:
    assert digest.handler({"day": "2026-11-28"}, context())["total"] == 0
    [mail] = ler.sent_mail()
    assert "Nothing was dropped." in mail.body


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


def mark_pending(pass_no: int, updated: dt.datetime, lead_id: str = "f-1") -> None:
    lead = Lead(
        lead_id=lead_id,
        lane="form",
        received_at=NOW.isoformat(),
        contact=Contact(email="a@acme.co.uk"),
        pass_no=pass_no,
    )
    PendingMarkers(CACHE).mark(lead, "provider down", updated)


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


def test_backfill_re_enriches_every_pending_lead_and_re_syncs_the_index(ler: Ler) -> None:
    mark_pending(3, NOW - dt.timedelta(hours=5), "f-tired")
    mark_pending(0, NOW - dt.timedelta(hours=5), "f-new")
    for n in range(5):
        ler.crm.add(email=f"person{n}@acme-widgets.co.uk", firstname=f"P{n}", lastname="Doe")

    report = backfill.handler({"job": "ler-backfill"}, context())
    assert report["re_enriched"] == 2
    assert sorted((e["detail"]["lead_id"], e["detail"]["pass_no"]) for e in ler.emitted()) == [
        ("f-new", 1),
        ("f-tired", 4),
    ]
    assert (report["pages"], report["contacts"], report["complete"]) == (3, 5, True)  # 2 a page
    assert (ler.identity("EMAIL#person4@acme-widgets.co.uk") or {})["source"] == "crm-export"


def test_backfill_stops_paging_before_its_timeout(ler: Ler) -> None:
    for n in range(5):
        ler.crm.add(email=f"person{n}@acme-widgets.co.uk")
    remaining = iter([600_000, 100_000, 30_000])
    job = Backfill(
        PendingMarkers(CACHE),
        EventBridgeSink("crm.dev.ler"),
        InProcessSyncer(),
    )
    report = job.run(lambda: next(remaining))
    assert (report.pages, report.complete) == (2, False)
    assert report.notes == ["re-sync stopped for time after 2 page(s)"]


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
