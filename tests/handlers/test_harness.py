"""The harness itself: the world is the graph's, and a restore leaves nothing of a test behind."""

from __future__ import annotations

import os

import pytest

from handlers.common.aws_clients import client, table
from tests.handlers.conftest import FunctionEnv
from tests.handlers.world import World


def test_every_table_is_deployed_as_the_graph_declares_it(dev_stack: World) -> None:
    assert dev_stack.topology.tables, "the dev graph declares tables"
    for spec in dev_stack.topology.tables:
        described = client("dynamodb", spec.region).describe_table(TableName=spec.name)["Table"]
        keys = {k["KeyType"]: k["AttributeName"] for k in described["KeySchema"]}
        assert keys["HASH"] == spec.hash_key, spec.name
        assert keys.get("RANGE") == spec.range_key, spec.name
        indexes = {i["IndexName"] for i in described.get("GlobalSecondaryIndexes", [])}
        assert indexes == {i["name"] for i in spec.indexes}, spec.name
        stream = described.get("StreamSpecification", {})
        assert stream.get("StreamViewType") == spec.stream_view, spec.name


def test_a_restore_leaves_nothing_a_test_wrote(dev_stack: World) -> None:
    env = dev_stack.environment("rrs-webhook")
    region = env["AWS_REGION"]
    requests = env["RRS_REQUESTS_TABLE"] if "RRS_REQUESTS_TABLE" in env else env["REQUESTS_TABLE"]
    table(requests, region).put_item(Item={"request_id": "r-1"})
    sqs = client("sqs", region)
    queue_url = sqs.get_queue_url(QueueName="dev-rrs-work")["QueueUrl"]
    sqs.send_message(QueueUrl=queue_url, MessageBody="{}")
    s3 = client("s3", "eu-west-2")
    bucket = "dev-ler-raw-123456789012"
    s3.put_object(Bucket=bucket, Key="a.json", Body=b"{}")
    secrets = client("secretsmanager", region)
    secrets.put_secret_value(SecretId="dev-rrs-webhook-secret", SecretString="s")
    dynamodb = client("dynamodb", region)
    dynamodb.create_table(
        TableName="made-by-a-test",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client("ses", region).send_email(
        Source="crm-bot@example.com",
        Destination={"ToAddresses": ["ops@example.com"]},
        Message={"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "b"}}},
    )

    dev_stack.restore()

    assert table(requests, region).scan()["Items"] == []
    answer = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=0)
    assert answer.get("Messages", []) == []
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0
    with pytest.raises(secrets.exceptions.ResourceNotFoundException):
        secrets.get_secret_value(SecretId="dev-rrs-webhook-secret")  # exists, has no value
    assert "made-by-a-test" not in dynamodb.list_tables()["TableNames"]
    assert requests in dynamodb.list_tables()["TableNames"]
    points = client("ses", region).get_send_statistics()["SendDataPoints"]
    assert sum(p["DeliveryAttempts"] for p in points) == 0
    s3.create_bucket(  # a bucket a test made is gone with its name
        Bucket="made-by-a-test", CreateBucketConfiguration={"LocationConstraint": "eu-west-2"}
    )
    dev_stack.restore()
    assert "made-by-a-test" not in {b["Name"] for b in s3.list_buckets()["Buckets"]}
    assert bucket in {b["Name"] for b in s3.list_buckets()["Buckets"]}


def test_a_stream_starts_empty_after_a_restore(dev_stack: World) -> None:
    spec = next(t for t in dev_stack.topology.tables if t.stream_view)
    table(spec.name, spec.region).put_item(
        Item={spec.hash_key: "a", **({spec.range_key: "b"} if spec.range_key else {})}
    )
    dev_stack.restore()
    arn = client("dynamodb", spec.region).describe_table(TableName=spec.name)["Table"][
        "LatestStreamArn"
    ]
    streams = client("dynamodbstreams", spec.region)
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
    iterator = streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    assert streams.get_records(ShardIterator=iterator)["Records"] == []


def test_the_empty_account_has_nothing(aws: None) -> None:
    assert client("dynamodb", "eu-west-2").list_tables()["TableNames"] == []
    assert client("dynamodb", "us-east-1").list_tables()["TableNames"] == []
    assert client("s3").list_buckets()["Buckets"] == []
    assert client("sqs", "eu-west-2").list_queues().get("QueueUrls", []) == []


def test_a_function_environment_is_the_graphs(function_env: FunctionEnv, dev_stack: World) -> None:
    spec = dev_stack.function("dm-merge")
    env = function_env("dm-merge")
    assert env == {**spec.environment, "AWS_REGION": spec.region, "AWS_DEFAULT_REGION": spec.region}
    assert all(os.environ[name] == value for name, value in env.items())
    assert spec.region == "us-east-1"


def test_merged_environments_must_agree(dev_stack: World) -> None:
    with pytest.raises(ValueError, match="AWS_REGION"):
        dev_stack.environment("dm-merge", "rrs-webhook")  # two regions
    merged = dev_stack.environment("dm-merge", "dm-score")
    assert "POWERTOOLS_SERVICE_NAME" not in merged
    with pytest.raises(KeyError, match="no function 'dm-nothing'"):
        dev_stack.environment("dm-nothing")


def test_a_restore_after_a_moto_wide_reset_brings_the_whole_stack_back(dev_stack: World) -> None:
    from moto.core.base_backend import BackendDict

    BackendDict.reset()  # what the sandbox's in-process server does on /moto-api/reset
    dev_stack.restore()
    for spec in dev_stack.topology.tables:
        assert client("dynamodb", spec.region).describe_table(TableName=spec.name)["Table"]
    for identity, region in dev_stack.topology.identities:
        ses = client("ses", region)
        assert identity in ses.list_identities()["Identities"], (identity, region)
    client("sesv2", "eu-west-2").send_email(  # sesv2 sends through the new SES v1 backend
        FromEmailAddress="crm-bot@example.com",
        Destination={"ToAddresses": ["ops@example.com"]},
        Content={"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "b"}}}},
    )
    ses = client("ses", "eu-west-2")
    ses.send_email(  # SES v1 accepts the stack's sender domain again
        Source="crm-bot@example.com",
        Destination={"ToAddresses": ["ops@example.com"]},
        Message={"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "b"}}},
    )
