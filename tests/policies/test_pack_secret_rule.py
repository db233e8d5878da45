"""secret-value-kept: a write-only parameter's inputs are set once (ignore_changes), so no
update re-sends its value; the stack's own parameters comply, and lose it without SecretSlot's
ignore_changes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from components.offline.policy_view import policy_resources
from components.secret_slot import SET_ONCE
from policies.pack import POLICIES_BY_NAME
from policies.runner import Violation, evaluate
from policies.testing import make_resource
from testsupport.graphs import GraphCache

RULE = "secret-value-kept"
PARAMETER = "aws:ssm/parameter:Parameter"
ENGINE_NAMES = ["allowedPattern", "arn", "dataType", "description", "insecureValue", "keyId",
                "tier", "type", "value", "valueWo", "valueWoVersion"]
PROPS: dict[str, Any] = {
    "name": "/dev/dm-link-key",
    "type": "SecureString",
    "tier": "Standard",
    "description": "keyring of dm's review and undo links",
    "valueWo": "unset: make secrets sets this parameter",
    "valueWoVersion": 1,
    "tags": {"crm:system": "dm"},
}


def _run(props: dict[str, Any], ignore_changes: Sequence[str]) -> list[Violation]:
    resource = make_resource(PARAMETER, "dm-link-key", props, ignore_changes=ignore_changes)
    return evaluate([resource], policies=[POLICIES_BY_NAME[RULE]])


def test_a_parameter_whose_inputs_are_set_once_passes() -> None:
    assert _run(PROPS, ENGINE_NAMES) == []
    # SET_ONCE is the same list, under the SDK's names (the engine records them camelCased).
    assert [n.replace("_", "") for n in SET_ONCE] == [n.lower() for n in ENGINE_NAMES]


@pytest.mark.parametrize("dropped", ["description", "tier", "valueWoVersion", "type"])
def test_an_input_left_out_of_ignore_changes_is_named(dropped: str) -> None:
    found = _run(PROPS, [n for n in ENGINE_NAMES if n != dropped])
    assert len(found) == 1 and found[0].urn and found[0].urn.endswith("::dm-link-key")
    assert f"a change to {dropped} would make `pulumi up` send PutParameter" in found[0].message


def test_an_input_added_later_must_be_set_once_too() -> None:
    found = _run({**PROPS, "keyId": "alias/crm"}, ["description", "tier", "type", "valueWo", "valueWoVersion"])
    assert [v.message.split("a change to ")[1].split(" would")[0] for v in found] == ["keyId"]


def test_parameters_the_program_owns_and_secrets_manager_secrets_are_not_its_business() -> None:
    plain = {k: v for k, v in PROPS.items() if not k.startswith("valueWo")} | {"value": "v1"}
    assert _run(plain, []) == []
    secret = make_resource("aws:secretsmanager/secret:Secret", "s", {"name": "dev-x", "description": "d"})
    assert evaluate([secret], policies=[POLICIES_BY_NAME[RULE]]) == []


def test_the_stacks_parameters_comply_and_would_not_without_secret_slots_ignore_changes(
    graphs: GraphCache,
) -> None:
    graph = graphs.run("dev")
    rule = [POLICIES_BY_NAME[RULE]]
    assert evaluate(policy_resources(graph), policies=rule) == []
    for r in graph.of_type(PARAMETER):
        r.ignore_changes = []
    found = evaluate(policy_resources(graph), policies=rule)
    assert len(found) == 17
    assert all("description, tier, type, valueWo, valueWoVersion" in v.message for v in found)
