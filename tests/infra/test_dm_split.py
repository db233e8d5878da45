"""Issue 43: the split weekly run deployed: dm-stage, its queue, the shards bucket, its grants."""

from __future__ import annotations

import json

import pytest

from components.offline.engine import ACCOUNT_ID, Graph
from components.work_queue import VISIBILITY_PER_CONSUMER_TIMEOUT
from tests.infra.graph_helpers import (
    DOCUMENTS_STORE,
    arns_in,
    functions,
    grants_of,
    run,
    statements_of,
)
from tests.infra.test_dm import EVENT_SOURCE, PAIRS, logs, only_dm

arn = arns_in("us-east-1")
SHARDS = f"dev-dm-shards-{ACCOUNT_ID}"
STAGES_Q = arn("sqs", "dev-dm-stages")
BLOCKS_Q = arn("sqs", "dev-dm-blocks")


@pytest.fixture(scope="module")
def graph() -> Graph:
    return run("dev", {**DOCUMENTS_STORE, "systems": only_dm()})


def test_dm_stage_holds_exactly_what_its_stages_do(graph: Graph) -> None:
    assert grants_of(graph, "dm-stage") == {
        logs("dm-stage"),
        (("s3:GetObject", "s3:PutObject"), (f"arn:aws:s3:::{SHARDS}/shards/*",)),
        (("s3:ListBucket",), (f"arn:aws:s3:::{SHARDS}",)),
        (("dynamodb:GetItem",), (PAIRS,)),
        (("dynamodb:UpdateItem",), (PAIRS,)),
        (("dynamodb:PutItem",), (PAIRS,)),
        (("sqs:SendMessage",), (STAGES_Q,)),
        (("sqs:SendMessage",), (BLOCKS_Q,)),
        (EVENT_SOURCE, (STAGES_Q,)),
    }


def test_its_listing_and_its_table_items_are_held_to_their_prefixes(graph: Graph) -> None:
    """ListBucket only under shards/; on dm-pairs only the saved read chunks (read#), the stage
    counters (split#) and the run summary (run#): never a pair or a decision."""
    by_sid = {s["Sid"]: s for s in statements_of(graph, "dm-stage")}
    assert by_sid["ListShards"]["Condition"] == {"StringLike": {"s3:prefix": ["shards/*"]}}
    leading = {
        sid: by_sid[sid]["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]
        for sid in ("ReadSavedChunks", "StageCounters", "RunSummary")
    }
    assert leading == {"ReadSavedChunks": ["read#*"], "StageCounters": ["split#*"], "RunSummary": ["run#*"]}
    assert by_sid["ReadSavedChunks"]["Action"] == ["dynamodb:GetItem"]
    assert by_sid["StageCounters"]["Action"] == ["dynamodb:UpdateItem"]


def test_the_shards_bucket_ends_a_runs_objects_and_says_it_holds_contacts(graph: Graph) -> None:
    """S3 lifecycle expiration deletes the objects two days after they are written (S3 User
    Guide, "Expiring objects",
    https://docs.aws.amazon.com/AmazonS3/latest/userguide/lifecycle-expire-general-considerations.html)."""
    [lifecycle] = [
        c for c in graph.of_type("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")
        if c.inputs["bucket"] == SHARDS
    ]
    [rule] = lifecycle.inputs["rules"]
    assert rule["status"] == "Enabled" and rule["expiration"] == {"days": 2}
    assert "noncurrentVersionExpiration" not in rule or rule["noncurrentVersionExpiration"] is None
    [bucket] = [b for b in graph.of_type("aws:s3/bucket:Bucket") if b.inputs["bucket"] == SHARDS]
    assert bucket.inputs["tags"]["crm:personal-data"] == "held"  # contact records
    [public] = [
        p for p in graph.of_type("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
        if p.inputs["bucket"] == SHARDS
    ]
    assert public.inputs["restrictPublicBuckets"] is True


def test_the_stage_queue_is_paced_and_outlasts_six_of_its_consumers_timeouts(graph: Graph) -> None:
    """Lambda Developer Guide: "set the source queue's visibility timeout to at least six times
    the timeout that you configure on your function"
    (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html); a maximum
    concurrency caps how many partitions run at once
    (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html)."""
    [queue] = [q for q in graph.of_type("aws:sqs/queue:Queue") if q.inputs["name"] == "dev-dm-stages"]
    timeout = functions(graph)["dev-dm-stage"].inputs["timeout"]
    assert queue.inputs["visibilityTimeoutSeconds"] >= VISIBILITY_PER_CONSUMER_TIMEOUT * timeout
    assert json.loads(queue.inputs["redrivePolicy"])["maxReceiveCount"] == 5
    [mapping] = [
        m for m in graph.of_type("aws:lambda/eventSourceMapping:EventSourceMapping")
        if m.inputs["eventSourceArn"] == STAGES_Q
    ]
    assert mapping.inputs["batchSize"] == 1
    assert mapping.inputs["scalingConfig"] == {"maximumConcurrency": 5}


def test_dm_block_is_told_when_to_split_and_dm_stage_where_the_shards_are(graph: Graph) -> None:
    block = functions(graph)["dev-dm-block"].inputs["environment"]["variables"]
    assert (block["SPLIT_ABOVE"], block["PORTAL_SIZE"], block["PARTITION_CONTACTS"]) == ("500000", "0", "5000")
    assert block["STAGES_QUEUE_URL"].endswith("/dev-dm-stages")
    stage = functions(graph)["dev-dm-stage"].inputs["environment"]["variables"]
    assert stage["SHARDS_BUCKET"] == SHARDS
    assert stage["BLOCKS_QUEUE_URL"].endswith("/dev-dm-blocks")


def test_a_stated_portal_size_reaches_dm_block() -> None:
    dm = {**only_dm()["dm"], "portalContacts": 2_000_000, "splitAbove": 100_000, "partitionContacts": 50}
    graph = run("dev", {**DOCUMENTS_STORE, "systems": {**only_dm(), "dm": dm}})
    block = functions(graph)["dev-dm-block"].inputs["environment"]["variables"]
    assert (block["SPLIT_ABOVE"], block["PORTAL_SIZE"], block["PARTITION_CONTACTS"]) == ("100000", "2000000", "50")


def test_a_split_runs_chain_of_stages_stays_under_lambdas_recursive_loop_limit() -> None:
    """dm-stage sends each next stage to the queue that invokes it: one chain of requests per
    run. Lambda stops a function invoked by the same triggering event more than 16 times
    through SQS, SNS and Lambda ("Lambda recursive loop detection",
    https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html; launch note
    https://aws.amazon.com/about-aws/whats-new/2023/07/aws-lambda-detects-recursive-loops-lambda-functions/),
    so a run's stages, each one hop of dm-stage, must stay below it."""
    from handlers.duplicate_merger.split import STAGES

    assert len(STAGES) < 16
