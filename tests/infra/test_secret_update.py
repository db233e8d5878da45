"""Secrets survive every update: after `make secrets`, no edit of a parameter's declared inputs
makes `pulumi up` write its value or fail on it (components/secret_slot.py, SET_ONCE).

Each test builds the dev stack's 14 parameters in moto as the provider creates them, sets the
operator's value as `make secrets` does, edits one declared input of every parameter, and
replays the update the way the engine and the provider make it (testsupport/parameter_update.py,
from the provider's source: PROVIDER_SOURCE)."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pulumi_aws as aws
import pytest
from moto import mock_aws

from components.operate import stack_secrets as cmd
from components.secret_slot import SET_ONCE
from testsupport import parameter_update as up
from testsupport.graphs import GraphCache

PARAMETER = "aws:ssm/parameter:Parameter"
Edit = Callable[[dict[str, Any]], None]

EDITS: dict[str, Edit] = {
    "description": lambda i: i.update(description=i["description"] + " Rotated yearly."),
    "tags": lambda i: i.update(tags={**i["tags"], "crm:owner": "ops"}),
    "tier": lambda i: i.update(tier="Advanced"),
    # What the issue feared most: the placeholder sent again over the operator's value.
    "valueWoVersion": lambda i: i.update(valueWoVersion=i["valueWoVersion"] + 1),
}


@pytest.fixture
def deployed(graphs: GraphCache, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The dev stack's parameters created in moto, each holding an operator's value."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    graph = graphs.run("dev")
    params = graph.of_type(PARAMETER)
    with mock_aws():
        for p, secret in zip(params, _secrets(graph, params), strict=True):
            client = boto3.client("ssm", region_name=secret.region)
            up.create(client, p.inputs)
            cmd.put_value(client, secret, f"operator value of {secret.name}")
        yield params


def _secrets(graph: Any, params: list[Any]) -> list[cmd.StackSecret]:
    by_name = {s.physical: s for s in cmd.secrets_in(graph)}
    return [by_name[p.inputs["name"]] for p in params]


def _stored(client: Any, name: str) -> tuple[str, int, str, str]:
    value = client.get_parameter(Name=name, WithDecryption=True)["Parameter"]
    meta = client.describe_parameters(
        ParameterFilters=[{"Key": "Name", "Option": "Equals", "Values": [name]}]
    )["Parameters"][0]
    return value["Value"], int(value["Version"]), meta.get("Description", ""), meta["Tier"]


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_parameter_keeps_the_operators_value(
    edit: str, deployed: list[Any], graphs: GraphCache
) -> None:
    secrets = _secrets(graphs.run("dev"), deployed)
    assert len(deployed) == 17
    for p, secret in zip(deployed, secrets, strict=True):
        client = boto3.client("ssm", region_name=secret.region)
        before = _stored(client, secret.physical)
        assert before[:2] == (f"operator value of {secret.name}", 2)
        program = copy.deepcopy(p.inputs)
        EDITS[edit](program)
        calls = up.update(client, p.inputs, up.goal(p.inputs, program, p.ignore_changes))
        assert _stored(client, secret.physical) == before, (edit, calls)
        assert cmd.has_value(client, secret)  # `make verify` still sees the operator's value
        tags = client.list_tags_for_resource(ResourceType="Parameter", ResourceId=secret.physical)
        # Tags are not the value: they update, with their own calls and no PutParameter.
        assert (edit == "tags") == ({"Key": "crm:owner", "Value": "ops"} in tags["TagList"])
        assert "PutParameter" not in calls


def test_every_input_that_resends_the_value_is_set_once() -> None:
    # A pulumi-aws release that adds a Parameter input fails this until SET_ONCE names it:
    # only the name and region (a new parameter), tags (their own calls) and overwrite (left
    # out of the update's change test) send no PutParameter.
    inputs = set(inspect.signature(aws.ssm.ParameterArgs.__init__).parameters) - {"__self__"}
    assert set(SET_ONCE) == inputs - {"name", "region", "tags", "overwrite"}
