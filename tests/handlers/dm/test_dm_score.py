"""dm-score: a week's block messages scored once, whatever the redeliveries; rejected pairs never
return; every message of a run scored with the bands the reviewer's decisions set."""

from __future__ import annotations

from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.common.link_tokens import issue_token
from handlers.duplicate_merger import runs, scoring
from handlers.duplicate_merger.functions import merge
from handlers.duplicate_merger.pipeline import MessageError
from handlers.duplicate_merger.store import PairStore, QueueSender
from tests.handlers.dm.conftest import DmAws
from tests.handlers.dm.flows import (
    KEYS,
    NOW,
    THRESHOLDS,
    crm_with_duplicates,
    queued_merges,
    request,
    run_week,
)


def test_the_week_finds_the_pair_once_and_queues_its_automatic_merge(dm_aws: DmAws) -> None:
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    row = dm_aws.pairs.get_item(Key={"pair_key": "101#102"})["Item"]
    assert row["band"] == "automatic" and row["review"] == "2026-W32#automatic"
    assert row["explanation"] == "same rare surname, same mobile, same phone"
    assert {t["field"] for t in row["terms"]} >= {"email", "phone", "last"}
    assert dm_aws.pairs.get_item(Key={"pair_key": "102#101"}).get("Item") is None
    assert queued_merges(dm_aws) == [
        {"pair_key": "101#102", "run": "2026-W32", "score": float(row["score"]), "v": 1}
    ]
    summary = dm_aws.pairs.get_item(Key={"pair_key": "run#latest"})["Item"]
    assert summary["run_id"] == "2026-W32" and summary["contacts"] == 402


def test_a_redelivered_block_message_sends_no_second_merge(dm_aws: DmAws) -> None:
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    assert len(queued_merges(dm_aws)) == 1
    run_week(dm_aws, crm)  # the same week again: every message delivered twice
    assert queued_merges(dm_aws) == []


def test_an_older_run_never_overwrites_a_newer_one(dm_aws: DmAws) -> None:
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    dm_aws.pairs.update_item(
        Key={"pair_key": "101#102"}, UpdateExpression="SET run_id = :r",
        ExpressionAttributeValues={":r": "2026-W40"},
    )
    totals = run_week(dm_aws, crm)
    assert totals["stale"] >= 1
    assert dm_aws.pairs.get_item(Key={"pair_key": "101#102"})["Item"]["run_id"] == "2026-W40"


def test_a_rejected_pair_never_returns(dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch) -> None:
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    token = issue_token(KEYS, subject="101#102", action="reject", ttl_seconds=3600, now=NOW.timestamp())
    registry.override(clock=lambda: NOW)
    answer = merge.handler(request("POST", "/reject", token), None)
    assert answer["statusCode"] == 200 and "not a duplicate" in answer["body"]
    dm_aws.pairs.delete_item(Key={"pair_key": "101#102"})
    totals = run_week(dm_aws, crm)
    assert totals["decided"] >= 1
    assert dm_aws.pairs.get_item(Key={"pair_key": "101#102"}).get("Item") is None
    assert dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]["decision"] == "not_a_duplicate"


def test_decisions_keep_their_score_and_move_the_next_runs_bands(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handlers.duplicate_merger.matcher import RunBands, counter_name
    from handlers.duplicate_merger.store import DecisionTally

    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    row = dm_aws.pairs.get_item(Key={"pair_key": "101#102"})["Item"]
    assert row["evidence"] == "person"  # the same mailbox and mobile
    token = issue_token(KEYS, subject="101#102", action="reject", ttl_seconds=3600, now=NOW.timestamp())
    registry.override(clock=lambda: NOW)
    assert merge.handler(request("POST", "/reject", token), None)["statusCode"] == 200
    decision = dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]
    assert decision["score"] == row["score"] and decision["evidence"] == "person"
    tally = DecisionTally(dm_aws.decisions)
    week = "2026-W32"  # NOW's ISO week
    assert tally.counts([week]) == {counter_name("person", float(row["score"]), False): 1}
    # Weeks of a reviewer rejecting coworker pairs: the next run stops proposing them, and the
    # run of the same week still scores with the bands it started with.
    tally.count("2026-W30", {counter_name("employer", 4.0, False): 45})
    tally.count("2026-W31", {counter_name("employer", 4.0, False): 5})
    bands = RunBands(tally.counts)
    assert bands(week, THRESHOLDS).bands.for_evidence("employer").propose > 4.0
    assert bands(week, THRESHOLDS).bands.for_evidence("person") == THRESHOLDS
    assert bands("2026-W33", THRESHOLDS).bands.for_evidence("person") == THRESHOLDS  # 1 < 30
    body = '{"v": 3}'
    with pytest.raises(MessageError):
        scoring.process(body, PairStore(dm_aws.pairs, dm_aws.decisions), QueueSender(dm_aws.merges_url),
                      thresholds=THRESHOLDS, floor=-10.0, now=NOW, pair_ttl_days=30, calibrate=bands)


def test_every_message_of_a_run_is_scored_with_the_calibrated_bands(dm_aws: DmAws) -> None:
    from handlers.common.aws_clients import client
    from handlers.duplicate_merger.matcher import RunBands, counter_name
    from handlers.duplicate_merger.store import DecisionTally

    tally = DecisionTally(dm_aws.decisions)
    tally.count("2026-W31", {counter_name("person", 18.0, False): 40})  # automatic merges undone
    store = PairStore(dm_aws.pairs, dm_aws.decisions)
    noted: list[str] = []

    def note(run_id: str, calibration: Any) -> None:
        noted.append(run_id)
        store.note_calibration(run_id, calibration.summary(), ttl=2_000_000_000)

    bands = RunBands(tally.counts, on_calibrated=note)
    crm = crm_with_duplicates()
    runs.run(crm.iter_contacts(), QueueSender(dm_aws.blocks_url), store,
              now=NOW, cap=50, phone_region="US", pair_ttl_days=30)
    classes: list[int] = []
    while got := client("sqs").receive_message(QueueUrl=dm_aws.blocks_url, MaxNumberOfMessages=10).get("Messages"):
        for m in got:
            counts = scoring.process(m["Body"], store, QueueSender(dm_aws.merges_url),
                                   thresholds=THRESHOLDS, floor=-10.0, now=NOW, pair_ttl_days=30,
                                   calibrate=bands)
            classes.append(counts["calibrated_classes"])
            client("sqs").delete_message(QueueUrl=dm_aws.blocks_url, ReceiptHandle=m["ReceiptHandle"])
    assert classes and set(classes) == {1}
    row = dm_aws.pairs.get_item(Key={"pair_key": "101#102"})["Item"]
    assert float(row["score"]) < bands("2026-W32", THRESHOLDS).bands.for_evidence("person").automatic
    assert row["band"] == "propose"  # no longer merged without a person
    assert queued_merges(dm_aws) == []
    # Noted once for the run, and the digest says how the decisions set the bands.
    assert noted == ["2026-W32"]
    lines = registry.service(merge)._bands_lines("2026-W32")
    assert lines[0] == "Your decisions (40 read) moved the bands of this run:"
    assert lines[1].startswith("pairs sharing a personal mailbox, mobile or birth date: proposed from")
    assert lines[1].endswith("(40 decided, 0% were duplicates)")
    assert registry.service(merge)._bands_lines("2026-W33") == []  # no message of that run scored


# Merging ---------------------------------------------------------------------------------


def test_score_refuses_a_malformed_message_and_reports_a_failing_one(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One batch, three outcomes: scored, refused (reported: it ends in dm-blocks-dlq), retried."""
    from handlers.common.aws_clients import client
    from handlers.duplicate_merger.functions import score

    runs.run(
        crm_with_duplicates().iter_contacts(), QueueSender(dm_aws.blocks_url),
        PairStore(dm_aws.pairs, dm_aws.decisions),
        now=NOW, cap=50, phone_region="US", pair_ttl_days=30,
    )
    got = client("sqs").receive_message(QueueUrl=dm_aws.blocks_url, MaxNumberOfMessages=10)
    good = next(m["Body"] for m in got["Messages"] if "101" in m["Body"] and "102" in m["Body"])
    real = scoring.process

    def failing(body: str, *args: Any, **kwargs: Any) -> dict[str, int]:
        if body == "boom":
            raise RuntimeError("the pairs table throttled")
        return real(body, *args, **kwargs)

    monkeypatch.setattr(scoring, "process", failing)
    records = [
        {"messageId": "good", "body": good, "eventSource": "aws:sqs"},
        {"messageId": "malformed", "body": "{not json", "eventSource": "aws:sqs"},
        {"messageId": "failing", "body": "boom", "eventSource": "aws:sqs"},
    ]
    answer = score.handler({"Records": records}, None)
    assert answer == {
        "batchItemFailures": [{"itemIdentifier": "malformed"}, {"itemIdentifier": "failing"}]
    }
    assert dm_aws.pairs.get_item(Key={"pair_key": "101#102"})["Item"]["band"] == "automatic"
