"""dm's AWS resources on moto, named as the stack names them, and the handlers' environment."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from handlers.common.api_versions import HUBSPOT_DEFAULT_VERSION
from handlers.duplicate_merger.functions import merge as merge_handler

REGION = "us-east-1"
KEYRING = {"active_kid": "k1", "keys": {"k1": "k" * 40}}


@dataclass
class DmAws:
    """Handles on the moto resources a test inspects."""

    pairs: Any
    decisions: Any
    merges: Any
    bucket: str
    blocks_url: str
    merges_url: str


def _table(dynamodb: Any, name: str, key: str, index: bool = False) -> None:
    args: dict[str, Any] = {
        "TableName": name,
        "KeySchema": [{"AttributeName": key, "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": key, "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if index:
        args["AttributeDefinitions"] += [
            {"AttributeName": "review", "AttributeType": "S"},
            {"AttributeName": "score", "AttributeType": "N"},
        ]
        args["GlobalSecondaryIndexes"] = [
            {
                "IndexName": "by-review",
                "KeySchema": [
                    {"AttributeName": "review", "KeyType": "HASH"},
                    {"AttributeName": "score", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ]
    dynamodb.create_table(**args)


@pytest.fixture
def dm_aws(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[DmAws]:
    from handlers.common.aws_clients import client, table

    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    dynamodb = client("dynamodb")
    _table(dynamodb, "dev-dm-pairs", "pair_key", index=True)
    _table(dynamodb, "dev-dm-decisions", "pair_key")
    _table(dynamodb, "dev-dm-merges", "merge_id")
    client("s3").create_bucket(Bucket="dev-dm-undo-123456789012")
    sqs = client("sqs")
    blocks_url = sqs.create_queue(QueueName="dev-dm-blocks")["QueueUrl"]
    merges_url = sqs.create_queue(QueueName="dev-dm-merges")["QueueUrl"]
    secrets = client("secretsmanager")
    secrets.create_secret(Name="dev-dm-link-key", SecretString=json.dumps(KEYRING))
    secrets.create_secret(Name="dev-dm-crm-write", SecretString="unused-by-the-fake")
    client("ses").verify_domain_identity(Domain="example.com")
    env = {
        "PAIRS_TABLE": "dev-dm-pairs",
        "DECISIONS_TABLE": "dev-dm-decisions",
        "MERGES_TABLE": "dev-dm-merges",
        "REVIEW_INDEX": "by-review",
        "UNDO_BUCKET": "dev-dm-undo-123456789012",
        "CRM_WRITE_SECRET": "dev-dm-crm-write",
        "LINK_KEY_SECRET": "dev-dm-link-key",
        "SENDER_EMAIL": "crm-bot@example.com",
        "REVIEWER_EMAIL": "ops@example.com",
        "LINK_TTL_DAYS": "30",
        "UNDO_DAYS": "90",
        "MERGES_QUEUE_URL": merges_url,
        "BLOCKS_QUEUE_URL": blocks_url,
        "AUTOMATIC_THRESHOLD": "12.0",
        "PROPOSE_THRESHOLD": "0.0",
        "RECORD_FLOOR": "-10.0",
        "PUBLIC_URL": "https://dm.example.test",
        "CRM_BASE_URL": "https://api.hubapi.com",
        "CRM_READ_SECRET": "dev-dm-crm-read",
        "HUBSPOT_API_VERSION": HUBSPOT_DEFAULT_VERSION,
        "BLOCK_CAP": "50",
        "PHONE_REGION": "US",
        "PAIR_TTL_DAYS": "30",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    merge_handler.reset()
    yield DmAws(
        table("dev-dm-pairs"),
        table("dev-dm-decisions"),
        table("dev-dm-merges"),
        "dev-dm-undo-123456789012",
        blocks_url,
        merges_url,
    )
    merge_handler.reset()
