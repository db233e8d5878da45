"""Both stacks on the mock engine: structure, naming, budget, and the policy verdict."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
import pytest

from components.offline.engine import Graph, run_program, stack_config_values
from components.offline.policy_view import evaluate_graph
from tests.infra.graph_helpers import run

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
        # An SSM parameter (secretStore: ssm) is /<prefix>/<name>, Parameter Store's hierarchy.
        assert name.startswith(
            (f"{prefix}-", f"/aws/lambda/{prefix}-", f"alias/{prefix}-", f"/{prefix}/")
        ), (
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


def test_each_system_schedules_in_its_own_group_and_scheduler_trusts_that_group(
    graph: Graph,
) -> None:
    """EventBridge Scheduler User Guide, "Confused deputy prevention in EventBridge Scheduler":
    aws:SourceArn in a schedule execution role's trust is the schedule group ARN.
    https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html
    """
    prefix = graph.config.prefix
    groups = {g.inputs["name"] for g in graph.of_type("aws:scheduler/scheduleGroup:ScheduleGroup")}
    assert {f"{prefix}-{key}" for key in graph.config.systems.enabled() if key != "ls"} <= groups
    schedules = graph.of_type("aws:scheduler/schedule:Schedule")
    assert len(schedules) == {"dev": 12, "prod": 11}[prefix]  # dev also mails the ls report
    roles = {r.physical_name: r for r in graph.of_type("aws:iam/role:Role")}
    for schedule in schedules:
        group = schedule.inputs["groupName"]
        system = schedule.inputs["name"][len(prefix) + 1 :].split("-", 1)[0]
        assert group == f"{prefix}-{system}", schedule.inputs["name"]
        role = roles[schedule.inputs["target"]["roleArn"].rsplit("/", 1)[-1]]
        (trust,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
        region = schedule.inputs["target"]["arn"].split(":")[3]
        assert trust["Condition"]["ArnEquals"] == {
            "aws:SourceArn": f"arn:aws:scheduler:{region}:123456789012:schedule-group/{group}"
        }
        assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": "123456789012"}


def _region_of(graph: Graph, resource_provider: str | None) -> str:
    for provider in graph.of_type("pulumi:providers:aws"):
        if resource_provider and resource_provider.startswith(provider.urn + "::"):
            return str(provider.inputs["region"])
    raise AssertionError(f"no provider for {resource_provider}")


def test_only_the_identity_owner_declares_ses_identities(graph: Graph) -> None:
    """prod owns the account's SES identities; dev sends from them without declaring them."""
    declared = {
        (r.inputs["emailIdentity"], _region_of(graph, r.provider))
        for r in graph.of_type("aws:sesv2/emailIdentity:EmailIdentity")
    }
    senders = {("example.com", "us-east-1"), ("example.com", "eu-west-2")}
    referenced = graph.outputs["sesIdentitiesReferenced"]
    if graph.config.mail_identity_owner:
        assert declared == senders
        assert referenced == {}
    else:
        assert declared == set()
        assert referenced == {"eu-west-2": ["example.com"], "us-east-1": ["example.com"]}
        assert graph.outputs["sesDkimTokens"] == {}
    # Either way the SendEmail grants name the same identity ARNs.
    granted = {
        arn
        for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy")
        for st in json.loads(policy.inputs["policy"])["Statement"]
        if "ses:SendEmail" in ([st["Action"]] if isinstance(st["Action"], str) else st["Action"])
        for arn in ([st["Resource"]] if isinstance(st["Resource"], str) else st["Resource"])
    }
    assert granted == {
        f"arn:aws:ses:{region}:123456789012:identity/{domain}" for domain, region in senders
    }


def test_every_send_email_grant_has_the_mail_identitys_one_shape(graph: Graph) -> None:
    """SendEmail comes only from MailIdentities.grant_send: one action, one identity, one From."""
    shapes = []
    for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy"):
        for st in json.loads(policy.inputs["policy"])["Statement"]:
            actions = [st["Action"]] if isinstance(st["Action"], str) else st["Action"]
            if any(a.startswith("ses:Send") for a in actions):
                shapes.append((policy.name, actions, st["Resource"], st.get("Condition")))
    assert len(shapes) >= 7  # dm 1, ler 2, upsr 2, rrs 2
    for name, actions, resources, condition in shapes:
        assert actions == ["ses:SendEmail"], name
        assert isinstance(resources, list) and len(resources) == 1, name
        assert condition is not None and list(condition) == ["StringEquals"], name
        (sender,) = condition["StringEquals"]["ses:FromAddress"]  # a list of one address
        assert resources[0].endswith("/" + sender.rpartition("@")[2]), name
