"""`make verify` asks Lambda whether ler-intake-queue triggers ler-normalize before it sends ler's
check lead: on a stack with ``queueTriggers: paused`` the lead would wait in the queue, so ler
fails at once, naming the setting, and writes nothing (tests/sandbox/test_verify.py). Answers
stubbed as the Lambda API Reference documents them (ListEventSourceMappings, ``State``:
https://docs.aws.amazon.com/lambda/latest/api/API_ListEventSourceMappings.html)."""

from __future__ import annotations

import uuid
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from components.operate.probing import Target

FUNCTION = "dev-ler-normalize"
QUEUE = "arn:aws:sqs:eu-west-2:123456789012:dev-ler-intake-queue"


def _target(states: list[str]) -> tuple[Target, Stubber]:
    target = Target(graph=None)  # type: ignore[arg-type]  # the graph is not read here
    client = boto3.Session(
        aws_access_key_id="x", aws_secret_access_key="x", region_name="eu-west-2"
    ).client("lambda")
    stub = Stubber(client)
    mappings: list[dict[str, Any]] = [
        {"UUID": str(uuid.UUID(int=i + 1)), "EventSourceArn": QUEUE, "FunctionArn": f"arn:aws:lambda:eu-west-2:123456789012:function:{FUNCTION}", "State": state}
        for i, state in enumerate(states)
    ]
    stub.add_response("list_event_source_mappings", {"EventSourceMappings": mappings}, {"FunctionName": FUNCTION})
    target.clients["lambda", "eu-west-2"] = client
    return target, stub


@pytest.mark.parametrize(
    ("states", "on"),
    [
        (["Enabled"], True),
        (["Enabling"], True),
        (["Disabled"], False),  # queueTriggers: paused
        (["Disabling"], False),
        ([], False),  # no mapping at all: nothing polls the queue either
    ],
)
def test_the_queue_trigger_is_read_from_the_mappings_state(states: list[str], on: bool) -> None:
    target, stub = _target(states)
    with stub:
        assert target.trigger_on(FUNCTION, "eu-west-2") is on
    stub.assert_no_pending_responses()
