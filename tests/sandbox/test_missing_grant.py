"""A grant removed from the graph makes the sandbox fail that call with AccessDenied."""

from __future__ import annotations

import json

import pytest

from sandbox.core import Sandbox
from sandbox.graph import without_grant
from tests.sandbox.fixture_scenario import TOKEN
from tests.sandbox.fixture_system import fixture_graph, resolve_handler


def _post_ticket(sb: Sandbox) -> int:
    sb.set_secret("tst-key", TOKEN)
    answer = sb.http(
        "tst-intake",
        "POST",
        "/",
        body=json.dumps({"ticket_id": "G1", "text": "x"}),
        headers={"x-token": TOKEN},
    )
    return answer.status


@pytest.mark.parametrize(
    ("function", "action", "resource_part"),
    [
        ("tst-intake", "dynamodb:PutItem", "table/dev-tst-tickets"),
        ("tst-intake", "secretsmanager:GetSecretValue", "secret:dev-tst-key-"),
    ],
)
def test_without_the_grant_the_call_is_denied(
    function: str, action: str, resource_part: str
) -> None:
    with Sandbox(fixture_graph(drop=(function, action)), resolver=resolve_handler) as sb:
        status = _post_ticket(sb)
        assert status == 502  # the handler raised: a Function URL answers 502
        [invocation] = [i for i in sb.runtime.invocations if i.function == f"dev-{function}"]  # type: ignore[union-attr]
        assert invocation.error_type in ("ClientError", "AccessDeniedException", "SecretError")
        [denied] = sb.denials()
        assert denied.denied.requirement.action == action
        assert resource_part in str(denied.denied.requirement.resource)
        assert sb.items("tst-tickets") == []


def test_with_the_grant_restored_the_same_call_passes() -> None:
    with Sandbox(fixture_graph(), resolver=resolve_handler) as sb:
        assert _post_ticket(sb) == 202
        assert not sb.denials()
        assert [t["ticket_id"] for t in sb.items("tst-tickets")] == ["G1"]


def test_a_trigger_grant_missing_is_reported_at_wiring() -> None:
    graph = without_grant(fixture_graph(), "dev-tst-worker", "sqs:ReceiveMessage")
    with Sandbox(graph, resolver=resolve_handler) as sb:
        assert sb.triggers is not None
        assert any("lacks sqs:ReceiveMessage" in p for p in sb.triggers.problems)
