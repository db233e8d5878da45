"""Shared fixtures for handler tests: fake AWS credentials, moto, DynamoDB tables.

No handler test may reach AWS: ``aws_env`` (autouse) points boto3 at fake credentials in
eu-west-2 and forgets cached clients around each test, and ``aws`` starts moto's ``mock_aws``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

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
    default_cache.invalidate()
    yield
    reset_clients()
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
