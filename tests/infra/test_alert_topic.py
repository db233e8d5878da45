"""AlertTopic on the mock engine: a customer-managed key AWS-service publishers may use.

Governing page: Amazon SNS Developer Guide, "Enable compatibility between event sources from
AWS services and encrypted topics",
https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.alert_topic import (
    KEY_ALIAS_TAG,
    AlertTopic,
    AlertTopicArgs,
    ServicePublisher,
    alarms_publisher,
    budgets_publisher,
)
from components.arns import Arns
from components.deployment import Deployment
from components.offline.engine import ACCOUNT_ID
from tests.infra.conftest import of_type, run_blocks, statements

ARNS = Arns("aws", "us-east-1", ACCOUNT_ID)


def alert_topic(_: Deployment) -> dict[str, Any]:
    AlertTopic(
        "alerts",
        AlertTopicArgs(
            arns=ARNS,
            name="dev-ops-alerts",
            publishers=(budgets_publisher(ARNS), alarms_publisher(ARNS)),
            emails=("ops@example.com", "owner@example.com"),
            tags={"crm:stack": "dev"},
        ),
    )
    return {}


@pytest.fixture(scope="module")
def graph() -> list[Any]:
    return run_blocks(alert_topic)


def test_topic_is_under_its_own_rotated_customer_managed_key(graph: list[Any]) -> None:
    (key,) = of_type(graph, "aws:kms/key:Key")
    (alias,) = of_type(graph, "aws:kms/alias:Alias")
    (topic,) = of_type(graph, "aws:sns/topic:Topic")
    assert key.inputs["enableKeyRotation"] is True
    assert alias.inputs["name"] == "alias/dev-ops-alerts"
    assert topic.inputs["kmsMasterKeyId"] == "alias/dev-ops-alerts"
    assert key.inputs["tags"][KEY_ALIAS_TAG] == "alias/dev-ops-alerts"
    (component,) = of_type(graph, "crm:index:AlertTopic")
    assert {key.parent, alias.parent, topic.parent} == {component.urn}


def test_key_policy_admits_each_publisher_with_source_conditions(graph: list[Any]) -> None:
    (key,) = of_type(graph, "aws:kms/key:Key")
    policy = json.loads(key.inputs["policy"])["Statement"]
    root, *services = policy
    assert root["Principal"] == {"AWS": f"arn:aws:iam::{ACCOUNT_ID}:root"}
    by_service = {s["Principal"]["Service"]: s for s in services}
    assert set(by_service) == {"budgets.amazonaws.com", "cloudwatch.amazonaws.com"}
    for statement in services:
        assert statement["Action"] == ["kms:Decrypt", "kms:GenerateDataKey*"]
        assert statement["Condition"]["StringEquals"] == {
            "aws:SourceAccount": ACCOUNT_ID,
            "kms:EncryptionContext:aws:sns:topicArn": f"arn:aws:sns:us-east-1:{ACCOUNT_ID}:dev-ops-alerts",
        }
    assert by_service["budgets.amazonaws.com"]["Condition"]["ArnLike"] == {
        "aws:SourceArn": f"arn:aws:budgets::{ACCOUNT_ID}:*"
    }
    assert by_service["cloudwatch.amazonaws.com"]["Condition"]["ArnLike"] == {
        "aws:SourceArn": f"arn:aws:cloudwatch:us-east-1:{ACCOUNT_ID}:alarm:*"
    }


def test_topic_policy_admits_publishers_and_denies_plain_http(graph: list[Any]) -> None:
    (policy,) = of_type(graph, "aws:sns/topicPolicy:TopicPolicy")
    topic_arn = f"arn:aws:sns:us-east-1:{ACCOUNT_ID}:dev-ops-alerts"
    assert policy.inputs["arn"] == topic_arn
    found = statements(policy)
    allows = [s for s in found if s["Effect"] == "Allow"]
    assert {s["Principal"]["Service"] for s in allows} == {
        "budgets.amazonaws.com",
        "cloudwatch.amazonaws.com",
    }
    for s in allows:
        assert s["Action"] == "sns:Publish" and s["Resource"] == topic_arn
        assert s["Condition"]["StringEquals"] == {"aws:SourceAccount": ACCOUNT_ID}
        assert "aws:SourceArn" in s["Condition"]["ArnLike"]
    (deny,) = [s for s in found if s["Effect"] == "Deny"]
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_one_email_subscription_per_address(graph: list[Any]) -> None:
    subscriptions = of_type(graph, "aws:sns/topicSubscription:TopicSubscription")
    assert {s.inputs["endpoint"] for s in subscriptions} == {
        "ops@example.com",
        "owner@example.com",
    }
    assert {s.inputs["protocol"] for s in subscriptions} == {"email"}


def test_refuses_no_publisher_and_non_service_principals() -> None:
    with pytest.raises(ValueError, match="AWS service principal"):
        ServicePublisher("123456789012")

    def no_publisher(d: Deployment) -> dict[str, Any]:
        AlertTopic("x", AlertTopicArgs(arns=ARNS, name="dev-x", publishers=()))
        return {}

    with pytest.raises(ValueError, match="at least one publisher"):
        run_blocks(no_publisher)
