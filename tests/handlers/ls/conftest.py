"""The lead source attributor's scenario on the dev stack's moto world: the key, events."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from handlers.common.aws_clients import client, table
from handlers.common.entry import registry
from tests.handlers.conftest import FunctionEnv

ORIGIN = "https://www.example.com"
ORIGINS = f"{ORIGIN},https://example.com"
BROWSER = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15"
KEY_SECRET = "dev-ls-email-hash-key"  # the dev stack's name for it
HASH_KEY = "k" * 40
LINK_KEY_SECRET = "dev-ls-report-link-key"
LINK_KEYRING = json.dumps({"active_kid": "k1", "keys": {"k1": "report-link-key-" + "l" * 24}})


@pytest.fixture
def ls_env(function_env: FunctionEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """ls's tables (stream on enquiries) as the dev stack deploys them, the four functions'
    environment from the graph, and this scenario's hash key and link keyring."""
    function_env("ls-capture", "ls-report", "ls-stitch", "ls-report-page")
    client("secretsmanager").put_secret_value(SecretId=KEY_SECRET, SecretString=HASH_KEY)
    client("secretsmanager").put_secret_value(SecretId=LINK_KEY_SECRET, SecretString=LINK_KEYRING)
    yield


def items(name: str) -> list[dict[str, Any]]:
    """Every item of a moto table, in key order."""
    found = table(name).scan()["Items"]
    return sorted(found, key=lambda i: json.dumps(i, sort_keys=True, default=str))


def beacon(
    body: Any = None,
    *,
    origin: str | None = ORIGIN,
    user_agent: str | None = BROWSER,
    method: str = "POST",
    cookies: list[str] | None = None,
    raw: str | None = None,
) -> dict[str, Any]:
    """A Function URL (payload 2.0) event as the site's script would send it."""
    headers = {"content-type": "text/plain;charset=UTF-8"}
    if origin is not None:
        headers["origin"] = origin
    if user_agent is not None:
        headers["user-agent"] = user_agent
    event: dict[str, Any] = {
        "version": "2.0",
        "rawPath": "/",
        "headers": headers,
        "requestContext": {"requestId": "req-1", "http": {"method": method}},
        "isBase64Encoded": False,
    }
    if raw is not None:
        event["body"] = raw
    elif body is not None:
        event["body"] = json.dumps(body)
    if cookies:
        event["cookies"] = cookies
    return event


def arrival(url: str, referrer: str = "", visitor_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "arrival", "url": url, "referrer": referrer}
    if visitor_id:
        body["visitor_id"] = visitor_id
    return body


def enquiry(
    email: str, heard_about: str = "", *, visitor_id: str | None = None,
    submission_id: str | None = "sub-00000001", url: str = f"{ORIGIN}/contact",
) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "enquiry", "url": url, "email": email,
                            "heard_about": heard_about}
    if visitor_id:
        body["visitor_id"] = visitor_id
    if submission_id:
        body["submission_id"] = submission_id
    return body


class Clock:
    """A settable clock for the handlers' ``clock`` collaborator."""

    def __init__(self, start: str = "2026-08-11T09:00:00") -> None:
        self.now = dt.datetime.fromisoformat(start).replace(tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> dt.datetime:
        self.now += dt.timedelta(**delta)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def apps(ls_env: None, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The handlers on the settable clock: tests call ``capture.handler`` / ``report.handler``
    as Lambda would."""
    registry.override(clock=clock)
    return clock


def stream_events(start_after: str | None = None) -> tuple[dict[str, Any], str | None]:
    """The enquiries stream's records since ``start_after`` as one Lambda stream event."""
    streams = client("dynamodbstreams")
    arn = client("dynamodb").describe_table(TableName="dev-ls-enquiries")["Table"][
        "LatestStreamArn"
    ]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
    if start_after:
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="AFTER_SEQUENCE_NUMBER",
            SequenceNumber=start_after,
        )["ShardIterator"]
    else:
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
    records = streams.get_records(ShardIterator=iterator)["Records"]
    last = records[-1]["dynamodb"]["SequenceNumber"] if records else start_after
    lambda_records = []
    for r in records:
        record = json.loads(json.dumps(r, default=str))
        record["eventSourceARN"] = arn
        record["awsRegion"] = "us-east-1"
        lambda_records.append(record)
    return {"Records": lambda_records}, last


StreamReader = Callable[[], dict[str, Any]]


@pytest.fixture
def read_stream(ls_env: None) -> StreamReader:
    """Each call returns the enquiries-stream records not yet returned, as a Lambda event."""
    position: dict[str, str | None] = {"last": None}

    def read() -> dict[str, Any]:
        event, position["last"] = stream_events(position["last"])
        return event

    return read
