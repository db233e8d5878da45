"""Shared fixtures for handler tests: fake AWS credentials, moto, DynamoDB tables.

No handler test may reach AWS: ``aws_env`` (autouse) points boto3 at fake credentials in
eu-west-2 and forgets cached clients around each test, and ``aws`` starts moto's ``mock_aws``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from handlers.common import settings
from handlers.common.aws_clients import reset_clients
from handlers.common.secrets import default_cache


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fake credentials and region; no shared config files; clean client and secret caches."""
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-2")
    monkeypatch.setenv("AWS_REGION", "eu-west-2")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SECURITY_TOKEN", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_ACCOUNT_ID_ENDPOINT_MODE", "disabled")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    reset_clients()
    settings.reset()
    default_cache.invalidate()
    yield
    reset_clients()
    settings.reset()
    default_cache.invalidate()


@pytest.fixture
def aws() -> Iterator[None]:
    """Every AWS call in the test goes to moto."""
    from moto import mock_aws

    with mock_aws():
        yield


@pytest.fixture
def make_table(aws: None) -> Callable[..., Any]:
    """Create an on-demand moto table: ``make_table("name", "pk", sort_key=None, ttl=None)``."""
    from handlers.common.aws_clients import client, table

    def create(
        name: str, partition_key: str, sort_key: str | None = None, ttl: str | None = None
    ) -> Any:
        schema = [{"AttributeName": partition_key, "KeyType": "HASH"}]
        attributes = [{"AttributeName": partition_key, "AttributeType": "S"}]
        if sort_key:
            schema.append({"AttributeName": sort_key, "KeyType": "RANGE"})
            attributes.append({"AttributeName": sort_key, "AttributeType": "S"})
        dynamodb = client("dynamodb")
        dynamodb.create_table(
            TableName=name,
            KeySchema=schema,
            AttributeDefinitions=attributes,
            BillingMode="PAY_PER_REQUEST",
        )
        if ttl:
            dynamodb.update_time_to_live(
                TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl}
            )
        return table(name)

    return create


@pytest.fixture
def atomic_dynamodb(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Latency]:
    """Each DynamoDB request applied whole before the next, as DynamoDB applies it; moto does not.

    Read in moto's source (``moto/dynamodb/models/__init__.py``, ``transact_write_items``, and
    ``table.py``, ``put_item``): a request runs on the caller's thread with no lock. A
    conditional put reads the current item, evaluates the condition and writes in plain Python
    steps another thread can interleave with; ``TransactWriteItems`` deep-copies every table it
    touches, applies its writes one by one, and on a failed condition puts the copies back,
    erasing whatever other threads wrote in between. DynamoDB guarantees the opposite: a
    conditional write is atomic, and a transaction is all-or-nothing and isolated from every
    other write to its items ("Amazon DynamoDB Transactions: How it works",
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html).

    So the race tests serialise moto's DynamoDB request handler with one lock: every request is
    then atomic, as in DynamoDB, and what the threads race on is the order and interleaving
    *between* requests, which is what the handlers must get right. (A real service cancels a
    concurrent conflicting transaction with ``TransactionConflict`` instead of queueing it;
    the handlers treat that code as a lost claim, and a unit test feeds it to them.)
    """
    import random
    import threading
    import time

    from moto.dynamodb.responses import DynamoHandler

    lock = threading.RLock()
    original = DynamoHandler.call_action
    latency = Latency()
    jitter = random.SystemRandom()  # not the module generator, which a test may have seeded

    def call_action(self: Any) -> Any:
        if latency.max_s:
            time.sleep(jitter.uniform(0, latency.max_s))
        with lock:
            return original(self)

    monkeypatch.setattr(DynamoHandler, "call_action", call_action)
    yield latency


class Latency:
    """Network latency the race tests add before each DynamoDB request (uniform 0..max_s), so
    the threads' requests arrive in a different order every trial."""

    max_s: float = 0.0
