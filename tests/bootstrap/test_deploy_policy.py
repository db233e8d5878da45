"""The pipeline roles' policies, regenerated from both stacks' graphs (bootstrap/deploy_policy.py)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from bootstrap import access
from bootstrap.deploy_policy import (
    ACCOUNT,
    MANAGED_POLICY_CHARS,
    UncoveredType,
    generate,
    path_for,
    render,
    size,
)
from components.arns import Arns
from components.offline.engine import ACCOUNT_ID, Graph, Resource
from policies.common.iamdata import glob_regex, lookup_action
from testsupport.graphs import GraphCache

STACKS = ("dev", "prod")
MANAGED_POLICIES_PER_ROLE = 10
"""IAM's default quota of managed policies attached to one role ("IAM and AWS STS quotas",
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html)."""


@pytest.fixture(scope="module", params=STACKS)
def graph(request: pytest.FixtureRequest, graphs: GraphCache) -> Graph:
    return graphs.program(request.param)


@pytest.fixture(scope="module")
def generated(graph: Graph) -> dict[str, Any]:
    return generate(graph)


def _statements(generated: dict[str, Any], role: str) -> list[dict[str, Any]]:
    return [st for doc in generated["policies"][role] for st in doc["Statement"]]


def test_the_committed_policy_is_the_one_the_graph_gives(graph: Graph, generated: dict[str, Any]) -> None:
    committed = path_for(graph.stack).read_text()
    assert committed == render(generated), (
        f"bootstrap/generated/{graph.stack}.json is stale: run make deploy-policy, then "
        "pulumi up in bootstrap/ for every account"
    )


def test_a_resource_type_without_a_row_fails_the_generation(graph: Graph) -> None:
    """The graph gains a type the deploy role cannot create: no policy is written."""
    stream = Resource(
        type="aws:kinesis/stream:Stream",
        name="extra",
        urn="urn:pulumi:dev::crm-automations::aws:kinesis/stream:Stream::extra",
        parent=None,
        custom=True,
        provider=graph.resources[0].provider,
        inputs={"name": f"{graph.config.prefix}-extra"},
    )
    graph.resources.append(stream)
    try:
        with pytest.raises(UncoveredType, match="aws:kinesis/stream:Stream"):
            generate(graph)
    finally:
        graph.resources.remove(stream)


def test_removing_a_row_of_a_declared_type_fails_the_generation(
    graph: Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = dict(access.TYPES)
    del rows["aws:dynamodb/table:Table"]
    monkeypatch.setattr("bootstrap.deploy_policy.TYPES", rows)
    with pytest.raises(UncoveredType, match="aws:dynamodb/table:Table"):
        generate(graph)


def _covers(statements: list[dict[str, Any]], action: str, arn: str) -> bool:
    return any(
        st["Effect"] == "Allow"
        and action in st["Action"]
        and any(glob_regex(r).match(arn) for r in st["Resource"])
        for st in statements
    )


def test_every_resource_the_graph_declares_can_be_created_by_the_deploy_role(
    graph: Graph, generated: dict[str, Any]
) -> None:
    """Each write of each resource's row, on that resource's own ARN, is allowed: the prefix
    patterns really name every resource (an SSM path, a bucket's account suffix...)."""
    statements = _statements(generated, "deploy")
    checked = 0
    for r in graph.resources:
        if not r.custom or r.type.startswith("pulumi:providers:"):
            continue
        row = access.TYPES[r.type]
        region = graph.region_of(r) or ""
        inputs = json.loads(json.dumps(r.inputs).replace(ACCOUNT_ID, ACCOUNT))
        arn = row.concrete(Arns("aws", region, ACCOUNT), inputs)
        for action in row.writes:
            target = "*" if not lookup_action(action).arn_formats else arn  # type: ignore[union-attr]
            assert _covers(statements, action, target), (r.type, r.name, action, target)
            checked += 1
    assert checked > 300


def test_roles_need_the_boundary_and_pass_only_to_their_services(generated: dict[str, Any]) -> None:
    """A role the deploy role creates carries the stack's boundary (iam:PermissionsBoundary,
    Service Authorization Reference for IAM); none is ever freed of it."""
    statements = _statements(generated, "deploy")
    boundary = generated["boundary"]["arn"]
    for st in statements:
        if st["Effect"] != "Allow":
            continue
        for action in ("iam:CreateRole", "iam:PutRolePolicy", "iam:PutRolePermissionsBoundary"):
            if action in st["Action"]:
                assert st["Condition"] == {"StringEquals": {"iam:PermissionsBoundary": boundary}}
        if "iam:PassRole" in st["Action"]:
            assert st["Condition"]["StringEquals"]["iam:PassedToService"] == [
                "lambda.amazonaws.com",
                "scheduler.amazonaws.com",
            ]
        assert not any(a.startswith("iam:") and "*" in a for a in st["Action"])
    denied = [st for st in statements if st["Effect"] == "Deny"]
    assert [st["Action"] for st in denied] == [["iam:DeleteRolePermissionsBoundary"]]
    assert boundary.endswith(f":policy/crm-pipeline/{generated['prefix']}-role-boundary")


@pytest.mark.parametrize("role", ["preview", "deploy", "verify"])
def test_no_write_with_a_resource_type_is_granted_on_star(
    generated: dict[str, Any], role: str
) -> None:
    """Only actions without a resource type (policy_sentry) go on "*", each pinned to the
    stack's regions; no action is a wildcard."""
    for st in _statements(generated, role):
        for action in st["Action"]:
            assert "*" not in action and "?" not in action, action
            info = lookup_action(action)
            assert info is not None, action
            if st["Resource"] == ["*"]:
                assert not info.arn_formats, f"{action} has a resource type but is granted on *"
                assert st["Condition"]["StringEquals"]["aws:RequestedRegion"], st["Sid"]
            else:
                assert "*" not in st["Resource"], st["Sid"]


def test_every_pattern_stays_under_the_prefix_or_names_one_outside_resource(
    generated: dict[str, Any],
) -> None:
    prefix = generated["prefix"]
    under = re.compile(rf"(^|[/:]){prefix}-|/{prefix}/")
    for role in ("preview", "deploy", "verify"):
        for st in _statements(generated, role):
            for resource in st["Resource"]:
                if resource == "*":
                    continue
                name = resource.split(":", 5)[5]
                if "*" in name.replace("/*", "", 1) or name.endswith("*"):
                    allowed = (
                        under.search(name)
                        or name == "event-source-mapping:*"  # pinned by lambda:FunctionArn
                        or ":layer:" in resource  # any version of the Powertools layer
                    )
                    assert allowed, (role, st["Sid"], resource)


def test_the_preview_role_reads_no_secret_and_writes_nothing(generated: dict[str, Any]) -> None:
    for st in _statements(generated, "preview"):
        for action in st["Action"]:
            info = lookup_action(action)
            assert info is not None and info.access_level in ("Read", "List"), action
            if action == "ssm:GetParameter":
                assert all("/aws/service/" in r for r in st["Resource"]), st


def test_each_policy_fits_iam_limits(generated: dict[str, Any]) -> None:
    for role in ("preview", "deploy", "verify"):
        documents = generated["policies"][role]
        assert all(size(d) <= MANAGED_POLICY_CHARS for d in documents), role
    attached = len(generated["policies"]["deploy"]) + len(generated["policies"]["verify"])
    assert attached <= MANAGED_POLICIES_PER_ROLE
    assert size(generated["boundary"]["document"]) <= MANAGED_POLICY_CHARS


def test_the_boundary_covers_every_grant_of_every_role_of_the_stack(
    graph: Graph, generated: dict[str, Any]
) -> None:
    """A boundary narrower than a function's grant would silently take that grant away."""
    boundary = generated["boundary"]["document"]["Statement"]
    for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy"):
        for st in policy.policy_statements():
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
            for action in actions:
                for resource in resources:
                    arn = resource.replace(ACCOUNT_ID, ACCOUNT)
                    assert _covers(boundary, action, arn), (policy.name, action, resource)


def test_the_docs_quote_each_services_statement_count() -> None:
    from bootstrap.deploy_policy import ROOT, statement_counts

    text = (ROOT / "docs" / "pipeline.md").read_text()
    block = text.split("<!-- deploy-policy-counts:begin -->")[1].split("<!-- deploy-policy-counts:end -->")[0]
    rows = {
        cells[0]: (int(cells[1]), int(cells[2]))
        for line in block.strip().splitlines()[2:]
        if (cells := [c.strip() for c in line.strip("|").split("|")])
    }
    counts = {s: statement_counts(json.loads(path_for(s).read_text())) for s in STACKS}
    services = sorted(set(counts["dev"]) | set(counts["prod"]))
    expected = {s: (counts["dev"].get(s, 0), counts["prod"].get(s, 0)) for s in services}
    expected["total"] = (sum(counts["dev"].values()), sum(counts["prod"].values()))
    assert rows == expected


def test_a_pipeline_deployed_stack_puts_the_boundary_on_every_role(graphs: GraphCache) -> None:
    """permissionsBoundary: true: each role names the boundary the deploy role's CreateRole
    requires; false (the default) names none, for a stack deployed from a laptop."""
    bounded = graphs.program("dev", {"permissionsBoundary": True})
    expected = f"arn:aws:iam::{ACCOUNT_ID}:policy/crm-pipeline/dev-role-boundary"
    roles = bounded.of_type("aws:iam/role:Role")
    assert len(roles) > 40
    assert {r.inputs.get("permissionsBoundary") for r in roles} == {expected}
    generated = json.loads(path_for("dev").read_text())
    assert generated["boundary"]["arn"].replace(ACCOUNT, ACCOUNT_ID) == expected
    plain = graphs.program("dev")
    assert {r.inputs.get("permissionsBoundary") for r in plain.of_type("aws:iam/role:Role")} == {None}
