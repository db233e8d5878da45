"""Issue 12's defects 2, 3 and 4 put back into the real graph of each stack, and caught.

Each test starts from the program's own graph on the mock engine (both stacks), reintroduces
one defect exactly as it was before the fix, and runs the whole policy pack over it
(components/offline/policy_view.py, the objects ``pulumi preview --policy-pack`` runs):

- defect 2: every Scheduler execution role trusted for one schedule's ARN in ``default``
  (ScheduledJob) or for a schedule-name prefix (rrs per-request role). EventBridge Scheduler
  User Guide, "Confused deputy prevention in EventBridge Scheduler",
  https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html
- defect 3: the budget topic under ``alias/aws/sns``. Amazon SNS Developer Guide, "Enable
  compatibility between event sources from AWS services and encrypted topics",
  https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
- defect 4: ls-stitch's role without ``dynamodb:ListStreams``. Lambda Developer Guide, "Using
  AWS Lambda with Amazon DynamoDB", https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from components.offline.engine import ACCOUNT_ID, Graph, Resource
from components.offline.policy_view import evaluate_graph
from policies.runner import Violation
from tests.infra.graph_helpers import run

ROLE = "aws:iam/role:Role"
SCHEDULE = "aws:scheduler/schedule:Schedule"


@pytest.fixture(scope="module", params=["dev", "prod", "prod-keyed"])
def graph(request: pytest.FixtureRequest) -> Graph:
    # Both stack files leave the alert topics unencrypted (alertTopicKey: none): "prod-keyed"
    # keeps the customer-managed keys, and their key policies, under these checks.
    if request.param == "prod-keyed":
        return run("prod", {"alertTopicKey": "customer-managed"})
    return run(request.param)


def broken(graph: Graph, change: Callable[[Graph], None]) -> list[Violation]:
    """The pack's violations over a copy of ``graph`` with ``change`` applied."""
    copied = copy.deepcopy(graph)
    change(copied)
    return evaluate_graph(copied)


def of_rule(violations: list[Violation], rule: str) -> list[str]:
    return [v.message for v in violations if v.policy_name == rule]


def _policy(resource: Resource, key: str) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(resource.inputs[key])
    return decoded


# Defect 2 -----------------------------------------------------------------------------------


def _schedule_trust_as_before(graph: Graph) -> None:
    """ScheduledJob roles trusted for their schedule's ARN in ``default``; the rrs request
    role for ``schedule/<group>/*``; the schedules back in ``default``."""
    roles = {r.physical_name: r for r in graph.of_type(ROLE)}
    for schedule in graph.of_type(SCHEDULE):
        region = schedule.inputs["target"]["arn"].split(":")[3]
        schedule.inputs["groupName"] = "default"
        role = roles[schedule.inputs["target"]["roleArn"].rsplit("/", 1)[-1]]
        trust = _policy(role, "assumeRolePolicy")
        name = schedule.inputs["name"]
        trust["Statement"][0]["Condition"]["ArnEquals"]["aws:SourceArn"] = (
            f"arn:aws:scheduler:{region}:{ACCOUNT_ID}:schedule/default/{name}"
        )
        role.inputs["assumeRolePolicy"] = json.dumps(trust)
    request_role = roles[f"{graph.config.prefix}-rrs-request-schedules-role"]
    trust = _policy(request_role, "assumeRolePolicy")
    condition = trust["Statement"][0]["Condition"]
    group = condition.pop("ArnEquals")["aws:SourceArn"].rsplit("/", 1)[-1]
    condition["ArnLike"] = {
        "aws:SourceArn": f"arn:aws:scheduler:eu-west-2:{ACCOUNT_ID}:schedule/{group}/*"
    }
    request_role.inputs["assumeRolePolicy"] = json.dumps(trust)


SCHEDULES = {"dev": 12, "prod": 11}
"""ScheduledJobs of the five systems: dev also mails the ls report (reportRecipient)."""


def test_defect_2_schedule_roles_trusted_for_a_schedule_or_prefix_are_caught(
    graph: Graph,
) -> None:
    found = of_rule(broken(graph, _schedule_trust_as_before), "scheduler-trust")
    one_schedule = [m for m in found if "one schedule's ARN" in m]
    prefix = [m for m in found if "schedule-name prefix" in m]
    assert len(one_schedule) == SCHEDULES[graph.config.prefix], found
    assert len(prefix) == 1 and "rrs-request-schedules-role" in prefix[0], found


def test_defect_2_a_schedule_moved_out_of_the_trusted_group_is_caught(graph: Graph) -> None:
    def move(g: Graph) -> None:
        schedule = g.named(SCHEDULE, f"{g.config.prefix}-dm-block-weekly")
        schedule.inputs["groupName"] = "default"

    found = of_rule(broken(graph, move), "scheduler-trust")
    assert len(found) == 1 and "dm-block-weekly in group default" in found[0], found


# Defect 3 -----------------------------------------------------------------------------------


def _budget_topic(g: Graph) -> Resource:
    """The topic the budget notifies: its own in dev, the us-east-1 alarm topic in prod."""
    (budget,) = g.of_type("aws:budgets/budget:Budget")
    arn = budget.inputs["notifications"][0]["subscriberSnsTopicArns"][0]
    return g.named("aws:sns/topic:Topic", arn.rsplit(":", 1)[-1])


def test_defect_3_budget_topic_under_the_aws_managed_key_is_caught(graph: Graph) -> None:
    def managed_key(g: Graph) -> None:
        _budget_topic(g).inputs["kmsMasterKeyId"] = "alias/aws/sns"

    found = of_rule(broken(graph, managed_key), "service-publisher-encryption")
    assert len(found) == 1, found
    assert _budget_topic(graph).inputs["name"] in found[0] and "alias/aws/sns" in found[0]
    assert "budgets.amazonaws.com" in found[0]


def test_defect_3_a_key_policy_without_the_publisher_is_caught(graph: Graph) -> None:
    alias = _budget_topic(graph).inputs.get("kmsMasterKeyId")
    if alias is None:
        pytest.skip("this stack's budget topic is unencrypted (alertTopicKey: none): no key policy")

    def drop_budgets(g: Graph) -> None:
        (key,) = [
            k for k in g.of_type("aws:kms/key:Key") if k.inputs["tags"].get("crm:kms-alias") == alias
        ]
        policy = _policy(key, "policy")
        policy["Statement"] = [
            s for s in policy["Statement"] if s["Principal"] != {"Service": "budgets.amazonaws.com"}
        ]
        key.inputs["policy"] = json.dumps(policy)

    found = of_rule(broken(graph, drop_budgets), "service-publisher-encryption")
    assert len(found) == 1 and "does not admit budgets.amazonaws.com" in found[0], found


# Defect 4 -----------------------------------------------------------------------------------


def _without_list_streams(g: Graph) -> None:
    policy = g.named("aws:iam/rolePolicy:RolePolicy", f"{g.config.prefix}-ls-stitch-grants")
    document = _policy(policy, "policy")
    document["Statement"] = [
        s for s in document["Statement"] if s["Action"] != ["dynamodb:ListStreams"]
    ]
    policy.inputs["policy"] = json.dumps(document)


def test_defect_4_stream_mapping_without_list_streams_is_caught(graph: Graph) -> None:
    found = of_rule(broken(graph, _without_list_streams), "event-source-mapping-permissions")
    assert len(found) == 1, found
    assert "ls-stitch" in found[0] and "lacks dynamodb:ListStreams on *" in found[0]


def test_defect_4_a_queue_mapping_without_delete_message_is_caught(graph: Graph) -> None:
    def drop_delete(g: Graph) -> None:
        policy = g.named("aws:iam/rolePolicy:RolePolicy", f"{g.config.prefix}-rrs-sender-grants")
        document = _policy(policy, "policy")
        for statement in document["Statement"]:
            if "sqs:DeleteMessage" in statement["Action"]:
                statement["Action"].remove("sqs:DeleteMessage")
        policy.inputs["policy"] = json.dumps(document)

    found = of_rule(broken(graph, drop_delete), "event-source-mapping-permissions")
    assert len(found) == 1 and "lacks sqs:DeleteMessage" in found[0], found


def test_stream_mapping_names_its_source_in_a_known_tag(graph: Graph) -> None:
    """At a real preview the stream ARN of a new table is unknown; the tag carries it."""

    def unknown_stream(g: Graph) -> None:
        for mapping in g.of_type("aws:lambda/eventSourceMapping:EventSourceMapping"):
            if "/stream/" in mapping.inputs["eventSourceArn"]:
                mapping.inputs.pop("eventSourceArn")

    assert of_rule(broken(graph, unknown_stream), "event-source-mapping-permissions") == []
    def unknown_stream_without_list_streams(g: Graph) -> None:
        unknown_stream(g)
        _without_list_streams(g)

    both = broken(graph, unknown_stream_without_list_streams)
    assert len(of_rule(both, "event-source-mapping-permissions")) == 1


# Service admissions -------------------------------------------------------------------------


def test_an_event_rule_whose_function_does_not_admit_it_is_caught(graph: Graph) -> None:
    def drop_permission(g: Graph) -> None:
        g.resources = [
            r
            for r in g.resources
            if not (
                r.type == "aws:lambda/permission:Permission" and r.name.endswith("-on-junk-invoke")
            )
        ]

    found = of_rule(broken(graph, drop_permission), "service-invoke-source-condition")
    assert len(found) == 1 and "junk-writer" in found[0] and "refused" in found[0], found


def test_ses_admitted_to_the_bucket_for_another_rule_is_caught(graph: Graph) -> None:
    def other_rule(g: Graph) -> None:
        for policy in g.of_type("aws:s3/bucketPolicy:BucketPolicy"):
            document = _policy(policy, "policy")
            for statement in document["Statement"]:
                arns = statement.get("Condition", {}).get("ArnLike", {})
                if "aws:SourceArn" in arns and ":ses:" in arns["aws:SourceArn"]:
                    arns["aws:SourceArn"] = arns["aws:SourceArn"].replace("inbound", "other")
            policy.inputs["policy"] = json.dumps(document)

    found = of_rule(broken(graph, other_rule), "service-invoke-source-condition")
    assert len(found) == 1 and "ses.amazonaws.com" in found[0], found


# Creation order -------------------------------------------------------------------------------


def test_the_receipt_rule_waits_for_the_bucket_policy_that_admits_ses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SES refuses CreateReceiptRule with InvalidS3Configuration until the bucket policy lets
    it write (Amazon SES API Reference, CreateReceiptRule,
    https://docs.aws.amazon.com/ses/latest/APIReference/API_CreateReceiptRule.html), so the
    rule must depend on that policy, or a first ``pulumi up`` races and fails."""
    from components.offline import engine

    dependencies: dict[str, list[str]] = {}
    register = engine.RecordingMonitor.RegisterResource

    def recording(self: engine.RecordingMonitor, request: Any) -> Any:
        response = register(self, request)
        dependencies[response.urn] = list(request.dependencies)
        return response

    monkeypatch.setattr(engine.RecordingMonitor, "RegisterResource", recording)
    graph = engine.run("dev")  # the program itself runs: the monitor above records it
    (rule,) = graph.of_type("aws:ses/receiptRule:ReceiptRule")
    bucket = rule.inputs["s3Actions"][0]["bucketName"]
    policy = graph.named("aws:s3/bucketPolicy:BucketPolicy", bucket)
    assert policy.urn in dependencies[rule.urn]


def _without_dependency(graph: Graph, resource_type: str, on_type: str) -> None:
    """Drop every recorded dependency of ``resource_type`` resources on ``on_type`` ones."""
    types = {r.urn: r.type for r in graph.resources}
    for r in graph.of_type(resource_type):
        r.dependencies = [d for d in r.dependencies if types.get(d) != on_type]


@pytest.mark.parametrize(
    "resource_type,on_type,expected",
    [
        ("aws:ses/receiptRule:ReceiptRule", "aws:s3/bucketPolicy:BucketPolicy", 1),
        ("aws:s3/bucketNotification:BucketNotification", "aws:lambda/permission:Permission", 1),
        ("aws:budgets/budget:Budget", "aws:sns/topicPolicy:TopicPolicy", 1),
        (
            "aws:lambda/eventSourceMapping:EventSourceMapping",
            "aws:iam/rolePolicy:RolePolicy",
            None,
        ),
    ],
)
def test_creation_order_catches_a_resource_that_no_longer_waits_for_its_policy(
    graph: Graph, resource_type: str, on_type: str, expected: int | None
) -> None:
    def change(g: Graph) -> None:
        _without_dependency(g, resource_type, on_type)
        if resource_type.endswith("EventSourceMapping"):
            # the mapping also waits through its function, which waits for the policy
            _without_dependency(g, "aws:lambda/function:Function", on_type)

    found = of_rule(broken(graph, change), "creation-order")
    mappings = len(graph.of_type("aws:lambda/eventSourceMapping:EventSourceMapping"))
    assert len(found) == (expected or mappings), found
    assert of_rule(evaluate_graph(graph), "creation-order") == []
