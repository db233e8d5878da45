"""Both stacks on the mock engine: structure, naming, budget, and the policy verdict."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
import pytest

from components.offline.engine import Graph, run, run_program, stack_config_values
from components.offline.policy_view import evaluate_graph

STACK_LEVEL = {
    "pulumi:providers:aws",
    "aws:sns/topic:Topic",
    "aws:sns/topicPolicy:TopicPolicy",
    "aws:sns/topicSubscription:TopicSubscription",
    "aws:budgets/budget:Budget",
    "aws:sesv2/emailIdentity:EmailIdentity",
    "aws:cloudwatch/dashboard:Dashboard",
}


@pytest.fixture(scope="module", params=["dev", "prod"])
def graph(request: pytest.FixtureRequest) -> Graph:
    return run(request.param)


def test_every_resource_belongs_to_a_system_or_the_stack_level(graph: Graph) -> None:
    systems = {r.urn for r in graph.resources if r.type.startswith("crm:index:")}
    for r in graph.resources:
        if r.type in STACK_LEVEL or r.type.startswith("crm:index:"):
            continue
        assert r.parent in systems, f"{r.type} {r.name} sits outside every component"


def test_physical_names_carry_the_stack_prefix(graph: Graph) -> None:
    prefix = graph.config.prefix
    for r in graph.resources:
        name = r.physical_name
        if (
            not r.custom
            or name is None
            or r.type
            in {
                "pulumi:providers:aws",
                "aws:sesv2/emailIdentity:EmailIdentity",
            }
        ):
            continue
        assert name.startswith((f"{prefix}-", f"/aws/lambda/{prefix}-", f"alias/{prefix}-")), (
            r.type,
            name,
        )


def test_one_provider_per_region_in_use(graph: Graph) -> None:
    providers = graph.of_type("pulumi:providers:aws")
    regions = [p.inputs["region"] for p in providers]
    assert len(regions) == len(set(regions))
    wanted = {s.region for s in graph.config.systems.enabled().values()} | {"us-east-1"}
    assert set(regions) == wanted


def test_functions_are_tagged_with_system_and_seed_name(graph: Graph) -> None:
    for fn in graph.of_type("aws:lambda/function:Function"):
        tags = fn.inputs["tags"]
        assert fn.physical_name == f"{graph.config.prefix}-{tags['crm:function']}"
        assert tags["crm:system"] in graph.config.systems.enabled()


def test_one_budget_alarm_emailing_the_alert_address(graph: Graph) -> None:
    (budget,) = graph.of_type("aws:budgets/budget:Budget")
    assert budget.inputs["timeUnit"] == "MONTHLY"
    assert float(budget.inputs["limitAmount"]) == graph.config.monthly_budget_usd
    topics = {n["subscriberSnsTopicArns"][0] for n in budget.inputs["notifications"]}
    (subscription,) = [
        s
        for s in graph.of_type("aws:sns/topicSubscription:TopicSubscription")
        if s.inputs["topic"] in topics
    ]
    assert topics == {subscription.inputs["topic"]}
    assert subscription.inputs["endpoint"] == graph.config.alert_email


def test_policy_verdict_is_clean(graph: Graph) -> None:
    violations = evaluate_graph(graph)
    assert violations == [], "\n".join(f"[{v.policy_name}] {v.message}" for v in violations)


def _raw_wildcard_role_policy() -> dict[str, object]:
    """A role policy declared by hand, bypassing the grant model."""
    role = aws.iam.Role(
        "by-hand",
        name="dev-by-hand",
        assume_role_policy=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "lambda.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
    )
    aws.iam.RolePolicy(
        "by-hand-policy",
        role="dev-by-hand",
        policy=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Sid": "PutAnywhere",
                        "Effect": "Allow",
                        "Action": "dynamodb:PutItem",
                        "Resource": "*",
                    }
                ],
            }
        ),
        opts=pulumi.ResourceOptions(depends_on=[role]),
    )
    return {}


def test_policy_pack_rejects_a_wildcard_write_that_reaches_the_graph_by_hand() -> None:
    values = stack_config_values("dev")
    resources, _ = run_program(_raw_wildcard_role_policy, stack="dev", values=values)
    clean = run("dev")
    graph = Graph(
        stack="dev", config=clean.config, resources=clean.resources + resources, outputs={}
    )
    violations = evaluate_graph(graph)
    assert any(
        v.policy_name == "no-wildcard-write" and "dynamodb:PutItem" in v.message for v in violations
    ), violations
