"""The handler tests' one harness: fake credentials, one moto world per process, and the
functions' environments from the program's graph.

No handler test may reach AWS. ``aws_env`` (autouse) points boto3 at fake credentials in
eu-west-2 and forgets cached clients, secrets and settings around each test. moto runs
in-process and is started once per process (``aws_world``): the dev stack's data plane is
deployed from the graph as the sandbox deploys it (``tests.handlers.world``), then each test gets
it back in its just-deployed state (``dev_stack``) or an empty account (``aws``), in
milliseconds instead of a moto start and a table builder per test. ``function_env`` sets a
function's environment exactly as the graph gives it to Lambda, so a test reads the same names
and values the infrastructure sets. A system's conftest keeps only its scenario: secret values,
seed items, fakes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from handlers.common.entry import registry
from tests.handlers.world import World
from testsupport.graphs import GraphCache

FAKE_CREDENTIALS = {
    "AWS_DEFAULT_REGION": "eu-west-2",
    "AWS_REGION": "eu-west-2",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    # moto cannot serve account-ID-based endpoints (DynamoDB streams among them).
    "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
    "AWS_CONFIG_FILE": "/dev/null",
    "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
}


def _fake_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in FAKE_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fake credentials and region; no shared config files; a new container: no wired service,
    kept cache (clients, secrets, settings...), override or moved clock (``entry.registry``)."""
    _fake_credentials(monkeypatch)
    registry.clear()
    yield
    registry.clear()


@pytest.fixture(scope="session")
def aws_world(graphs: GraphCache) -> Iterator[World]:
    """The dev stack deployed on moto once for this process (moto paused between tests).

    Its secrets are Secrets Manager secrets (``secretStore: secretsmanager``, the documents'
    store) although Pulumi.dev.yaml chooses Parameter Store: the fixtures set them by secret
    id. The Parameter Store path is played by the sandbox (tests/sandbox) and
    tests/handlers/common/test_common_secrets.py."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _fake_credentials(monkeypatch)
        world = World.open(graphs.program("dev", {"secretStore": "secretsmanager"}))
        world.pause()
        try:
            yield world
        finally:
            world.close()


@pytest.fixture
def moto_on(aws_world: World) -> Iterator[World]:
    """moto intercepts every AWS call for the test, on whatever state the world is in."""
    aws_world.resume()
    try:
        yield aws_world
    finally:
        aws_world.pause()


@pytest.fixture
def aws(moto_on: World, request: pytest.FixtureRequest) -> None:
    """Every AWS call goes to moto, in an account with nothing in it."""
    if "dev_stack" in request.fixturenames:
        raise pytest.UsageError("a test uses the empty account (aws) or the dev stack, not both")
    moto_on.empty()


@pytest.fixture
def dev_stack(moto_on: World, request: pytest.FixtureRequest) -> World:
    """Every AWS call goes to moto, where the dev stack is just deployed: its tables (key
    schemas, indexes, TTL, streams), queues, buckets, topics, empty secrets, SES identities,
    schedule groups and event rules, read from the graph; nothing a previous test wrote."""
    if "aws" in request.fixturenames:
        raise pytest.UsageError("a test uses the empty account (aws) or the dev stack, not both")
    moto_on.restore()
    return moto_on


FunctionEnv = Callable[..., dict[str, str]]


@pytest.fixture
def function_env(dev_stack: World, monkeypatch: pytest.MonkeyPatch) -> FunctionEnv:
    """``function_env("rrs-webhook", ...)`` sets the named functions' environment (merged) as
    the graph gives it to Lambda, region included, and returns it."""

    def use(*names: str) -> dict[str, str]:
        env = dev_stack.environment(*names)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        registry.restart()  # a new environment: a new container reads it
        return env

    return use


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
def atomic_dynamodb(moto_on: World, monkeypatch: pytest.MonkeyPatch) -> Iterator[Latency]:
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
