"""dm-stage, the split weekly run deployed (issue 43): dm-block starts it above ``splitAbove``,
each stage's last partition queues the next, the emit stage feeds dm-blocks, and the run ends
with the single run's pairs and scores. The stage counter counts a partition once under
redelivery and lets one of two partitions finishing at once advance the run."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from handlers.common.batch import Unusable
from handlers.duplicate_merger import fanout
from handlers.duplicate_merger.functions import block, stage
from handlers.duplicate_merger.pipeline import encode_messages, profiles_from, run_blocking
from tests.handlers.conftest import FunctionEnv
from tests.handlers.dm.conftest import DmAws
from tests.handlers.dm.test_dm_block import Context, portal
from tests.handlers.dm.test_dm_block_split import scored
from testsupport.events import sqs_event

RUN = "2026-W50"


def message(stage_name: str = "count", part: int = 0, parts: int = 3) -> fanout.StageMessage:
    return fanout.StageMessage(RUN, stage_name, part, parts, 2, 50, "US", "2026-12-07T06:00:00+00:00")


def test_a_stage_message_carries_its_format_version_and_anything_else_is_refused() -> None:
    m = message()
    data = json.loads(m.body())
    assert data["v"] == 1 and fanout.StageMessage.parse(m.body()) == m
    for bad in ("{", json.dumps({**data, "v": 2}), json.dumps({**data, "stage": "sort"}),
                json.dumps({**data, "part": 3}), json.dumps({k: v for k, v in data.items() if k != "cap"})):
        with pytest.raises(Unusable):
            fanout.StageMessage.parse(bad)


def test_each_stage_is_followed_by_the_next_with_its_own_number_of_partitions() -> None:
    read = message("read", parts=3)
    assert [m.stage for m in read.following()] == ["count"] * 3
    assert [m.part for m in message("tally").following()] == [0]  # reduce runs once
    assert [m.stage for m in message("reduce", parts=3).following()] == ["evidence"] * 3
    assert message("emit").following() == []


def test_the_rule_splits_on_the_read_or_the_stated_size() -> None:
    assert not fanout.splits(400_000, 0, 500_000)
    assert fanout.splits(500_001, 0, 500_000)
    assert fanout.splits(10, 2_000_000, 500_000)  # portalContacts says so before the read does


@pytest.fixture
def counter(dm_aws: DmAws) -> fanout.StageCounter:
    return fanout.StageCounter(dm_aws.pairs)


def test_a_partition_delivered_twice_is_counted_once(counter: fanout.StageCounter) -> None:
    assert counter.finish(message(part=0), ttl=1) is False
    assert counter.finish(message(part=0), ttl=1) is False  # the copy: not counted again
    assert counter.finish(message(part=1), ttl=1) is False  # 2 of 3: the copy did not make it 3
    assert counter.finish(message(part=2), ttl=1) is True  # the last partition advances the run
    counter.advanced(message(part=2))
    assert counter.finish(message(part=2), ttl=1) is False  # its redelivery after the sends


def test_a_run_of_the_same_week_started_again_counts_afresh(counter: fanout.StageCounter) -> None:
    for part in range(3):
        counter.finish(message(part=part), ttl=1)
    counter.advanced(message(part=2))
    again = fanout.StageMessage(RUN, "count", 0, 1, 2, 50, "US", "2026-12-07T09:00:00+00:00")
    assert counter.finish(again, ttl=1) is True  # not the first start's finished stage


def test_a_sender_that_failed_before_its_sends_is_covered_by_its_redelivery(
    counter: fanout.StageCounter,
) -> None:
    for part in range(2):
        counter.finish(message(part=part, parts=2), ttl=1)
    assert counter.finish(message(part=0, parts=2), ttl=1) is False  # another's copy: nothing
    # the last partition counted itself, then failed before sending: its message comes back
    assert counter.finish(message(part=1, parts=2), ttl=1) is True


def test_of_partitions_finishing_at_once_exactly_one_advances(
    dm_aws: DmAws, atomic_dynamodb: Any
) -> None:
    """Eight partitions, each delivered twice, all at once: one delivery advances the run."""
    atomic_dynamodb.max_s = 0.02
    for trial in range(5):
        assert len(race(fanout.StageCounter(dm_aws.pairs), f"{RUN}-{trial}", parts=8)) == 1


def race(counter: fanout.StageCounter, run_id: str, *, parts: int) -> list[int]:
    """The partitions whose delivery found it must send the next stage's messages."""
    won: list[int] = []

    def finish(part: int) -> None:
        m = fanout.StageMessage(run_id, "join", part, parts, 1, 50, "US", "")
        for _ in range(2):  # each partition delivered twice, at once
            if counter.finish(m, ttl=1):
                won.append(part)
                counter.advanced(m)

    threads = [threading.Thread(target=finish, args=(p,)) for p in range(parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won


def receive_all(url: str) -> list[str]:
    from handlers.common.aws_clients import client

    sqs = client("sqs")
    bodies: list[str] = []
    while True:
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not got:
            return bodies
        for m in got:
            bodies.append(m["Body"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


@pytest.fixture
def split_env(dm_aws: DmAws, function_env: FunctionEnv, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    from handlers.common.aws_clients import client
    from handlers.common.entry import registry

    env = function_env("dm-block", "dm-stage")
    client("secretsmanager").put_secret_value(SecretId="dev-dm-crm-read", SecretString='{"token": "svc"}')
    monkeypatch.setenv("SPLIT_ABOVE", "100")  # a small portal, split small
    monkeypatch.setenv("PARTITION_CONTACTS", "120")
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "dev-dm-block")
    registry.restart()
    return env


def test_a_split_run_ends_with_the_single_runs_pairs_and_its_summary(
    dm_aws: DmAws, split_env: dict[str, str]
) -> None:
    from handlers.common.entry import registry
    from testsupport.common import LambdaStub

    crm = portal(600)
    stub = LambdaStub()
    registry.override(block, crm=lambda deadline: crm, lambda_client=lambda: stub)
    started = block.handler({"action": "block"}, Context(300))
    assert started["split"] is True and started["read_messages"] == started["chunks"] >= 1
    (follow,) = [json.loads(c["Payload"]) for c in stub.invocations]  # deletions, from the saved read
    assert follow == {"action": "follow-deletions", "run_id": started["run_id"]}
    stages: list[str] = []
    copies = 0
    while bodies := receive_all(split_env["STAGES_QUEUE_URL"]):
        for body in bodies:
            stages.append(json.loads(body)["stage"])
            answer = stage.handler(sqs_event([body]), None)
            assert answer == {"batchItemFailures": []}
            if copies < 3:  # a few partitions delivered twice: nothing is sent again
                copies += 1
                stage.handler(sqs_event([body]), None)
    parts = -(-600 // 120)
    assert stages.count("count") == stages.count("emit") == parts
    assert stages.count("reduce") == stages.count("baseline") == 1
    blocks = receive_all(dm_aws.blocks_url)
    single = run_blocking(started["run_id"], profiles_from(list(crm.contacts.items())), cap=50)
    split_pairs = scored(blocks)
    assert split_pairs == scored(encode_messages(single)) and split_pairs
    summary = dm_aws.pairs.get_item(Key={"pair_key": f"run#{started['run_id']}"})["Item"]
    assert summary["contacts"] == 600 and summary["split"]["partitions"] == parts
    assert summary["messages"] == len(blocks)  # the copies (of the first stage) sent nothing


def test_a_read_over_several_invocations_queues_one_read_message_per_saved_chunk(
    dm_aws: DmAws, split_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The split start needs only ``SPLIT_RESERVE_S`` after the read, and reads nothing back:
    each saved chunk becomes one read message, which dm-stage decodes alone."""
    from handlers.common.entry import registry
    from handlers.duplicate_merger import reading
    from tests.handlers.dm.test_dm_block import six_pages_an_invocation
    from testsupport.common import LambdaStub

    crm = portal(1200)
    stub = LambdaStub()
    registry.override(block, crm=lambda deadline: crm, lambda_client=lambda: stub)
    six_pages_an_invocation(crm, monkeypatch)
    monkeypatch.setattr(reading, "SPLIT_RESERVE_S", 0.0)
    answer = block.handler({"action": "block"}, Context(300))
    while stub.invocations and json.loads(stub.invocations[0]["Payload"])["action"] == "block":
        answer = block.handler(json.loads(stub.invocations.pop(0)["Payload"]), Context(300))
    assert answer["split"] is True and answer["chunks"] == 2 and answer["contacts"] == 1200
    reads = [fanout.StageMessage.parse(b) for b in receive_all(split_env["STAGES_QUEUE_URL"])]
    assert sorted(m.part for m in reads) == [0, 1] and {m.stage for m in reads} == {"read"}
    checkpoints = reading.DynamoCheckpoints(dm_aws.pairs, ttl=0)
    read = [c for m in reads for c in reading.decode_chunk(checkpoints.chunk(str(answer["run_id"]), m.part))]
    assert sorted(cid for cid, _ in read) == sorted(crm.contacts)


def test_a_split_run_follows_hubspot_deletions_from_its_saved_read(
    dm_aws: DmAws, split_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42 above ``splitAbove``: no invocation of a split run holds every id, so dm-block
    starts one that reads the saved read's ids back and follows deletions as a single run does."""
    from handlers.common.entry import registry
    from tests.handlers.dm.test_dm_block import six_pages_an_invocation
    from testsupport.common import LambdaStub

    crm = portal(1200)
    gone, kept = "100007", "100008"
    dm_aws.pairs.put_item(Item={"pair_key": f"{gone}#{kept}", "a": {"id": gone}, "b": {"id": kept}})
    crm.delete_for_good(gone)  # the owner's GDPR delete in HubSpot
    stub = LambdaStub()
    registry.override(block, crm=lambda deadline: crm, lambda_client=lambda: stub)
    six_pages_an_invocation(crm, monkeypatch)  # a read over two invocations: saved in chunks
    block.handler({"action": "block"}, Context(300))
    answers = []
    while stub.invocations:
        answers.append(block.handler(json.loads(stub.invocations.pop(0)["Payload"]), Context(300)))
    assert any(a.get("split") for a in answers)
    assert [a["deleted_contacts"] for a in answers if "deleted_contacts" in a] == [1]
    assert "Item" not in dm_aws.pairs.get_item(Key={"pair_key": f"{gone}#{kept}"})
