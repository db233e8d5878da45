"""tag-values: per service family the program declares, a compliant tag passes and a tag that
service refuses is caught; the compliant stack passes."""

from __future__ import annotations

from typing import Any

import pytest

from policies.rules.tag_values import FAMILIES, STRICTEST, limits_for
from policies.testing import UNKNOWN_STRING
from tests.policies.pack_builders import compliant_stack, messages, run

RULE = "tag-values"

# One resource type per family the program declares, with its name property.
FAMILY_RESOURCES: dict[str, tuple[str, dict[str, Any]]] = {
    "SQS": ("aws:sqs/queue:Queue", {"name": "dev-rrs-work"}),
    "SNS": ("aws:sns/topic:Topic", {"name": "dev-alarms"}),
    "S3": ("aws:s3/bucket:Bucket", {"bucket": "dev-ler-raw"}),
    "DynamoDB": ("aws:dynamodb/table:Table", {"name": "dev-dm-merges"}),
    "Lambda": ("aws:lambda/function:Function", {"name": "dev-dm-merge"}),
    "EventBridge Scheduler": ("aws:scheduler/scheduleGroup:ScheduleGroup", {"name": "dev-rrs"}),
    "KMS": ("aws:kms/key:Key", {"description": "alarms"}),
    "Secrets Manager": ("aws:secretsmanager/secret:Secret", {"name": "dev-dm-crm-write"}),
    "Systems Manager": (
        "aws:ssm/parameter:Parameter",
        {"name": "/dev/dm-crm-write", "type": "SecureString"},
    ),
    "CloudWatch Logs": ("aws:cloudwatch/logGroup:LogGroup", {"name": "/aws/lambda/dev-x"}),
    "CloudWatch": ("aws:cloudwatch/metricAlarm:MetricAlarm", {"name": "dev-x-errors"}),
    "EventBridge": ("aws:cloudwatch/eventRule:EventRule", {"name": "dev-ler-digest"}),
    "IAM": ("aws:iam/role:Role", {"name": "dev-dm-merge-role"}),
}

COMPLIANT_TAGS = {
    "crm:stack": "dev",
    "crm:dead-letter-of": "schedules of group dev-rrs-requests made by rrs-webhook",
    "pulumi:project": "crm-automations",
    "Owner Name": "Zoë Müller 2 = + _ . / :",
}


def tagged(family: str, tags: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    resource_type, props = FAMILY_RESOURCES[family]
    return [(resource_type, "subject", {**props, "tags": tags})]


def test_every_declared_family_has_its_own_limits() -> None:
    for family, (resource_type, _) in FAMILY_RESOURCES.items():
        assert limits_for(resource_type).service == family
    assert {f.service for f in FAMILIES.values()} == set(FAMILY_RESOURCES)


def test_compliant_stack_passes() -> None:
    assert run(compliant_stack(), RULE) == []


@pytest.mark.parametrize("family", sorted(FAMILY_RESOURCES))
def test_compliant_tags_pass(family: str) -> None:
    tags = {**COMPLIANT_TAGS, "crm:unknown-yet": UNKNOWN_STRING}
    if family != "DynamoDB":
        tags["crm:alert-email"] = "ops@example.com"
    assert run(tagged(family, tags), RULE) == []


@pytest.mark.parametrize("family", sorted(FAMILY_RESOURCES))
def test_parentheses_in_a_value_are_refused(family: str) -> None:
    value = "schedules of group dev-rrs-requests (rrs-webhook)"
    found = messages(run(tagged(family, {"crm:dead-letter-of": value}), RULE))
    assert len(found) == 1
    assert f"{family} " in found[0]
    assert "value has '(' ')'" in found[0]


@pytest.mark.parametrize("family", sorted(FAMILY_RESOURCES))
def test_reserved_prefix_and_lengths_are_refused(family: str) -> None:
    limits = limits_for(FAMILY_RESOURCES[family][0])
    tags = {
        "AWS:CreatedBy": "me",
        "crm:note": "aws:lambda",
        "k" * (limits.key_max + 1): "v",
        "crm:long": "v" * (limits.value_max + 1),
        "crm:wild": "arn:aws:dynamodb:eu-west-2:123456789012:table/x/stream/*",
    }
    found = messages(run(tagged(family, tags), RULE))
    assert any("'AWS:CreatedBy': key starts with the reserved prefix aws:" in m for m in found)
    assert any("'crm:note': value starts with the reserved prefix aws:" in m for m in found)
    assert any(
        f"key is {limits.key_max + 1} characters (at most {limits.key_max})" in m for m in found
    )
    assert any(
        f"value is {limits.value_max + 1} characters (at most {limits.value_max})" in m
        for m in found
    )
    assert any("'crm:wild': value has '*'" in m for m in found)
    assert len(found) == 5


def test_exactly_the_longest_key_and_value_pass() -> None:
    limits = limits_for("aws:secretsmanager/secret:Secret")
    assert (limits.key_max, limits.value_max) == (127, 255)
    ok = {"k" * 127: "v" * 255}
    assert run(tagged("Secrets Manager", ok), RULE) == []
    assert run(tagged("SQS", {"k" * 128: "v" * 256}), RULE) == []
    assert len(run(tagged("Secrets Manager", {"k" * 128: "v" * 256}), RULE)) == 2


def test_dynamodb_refuses_at_sign_others_accept_it() -> None:
    tags = {"crm:alert-email": "ops@example.com"}
    found = messages(run(tagged("DynamoDB", tags), RULE))
    assert found and "value has '@'" in found[0]
    assert run(tagged("SQS", tags), RULE) == []


@pytest.mark.parametrize("family", ["SQS", "EventBridge Scheduler"])
def test_empty_value_refused_where_documented(family: str) -> None:
    found = messages(run(tagged(family, {"crm:empty": ""}), RULE))
    assert found == [f for f in found if "value is empty" in f] and len(found) == 1
    assert run(tagged("SNS", {"crm:empty": ""}), RULE) == []


def test_empty_key_and_non_string_value_are_refused() -> None:
    found = messages(run(tagged("Lambda", {"": "x", "crm:n": 5}), RULE))
    assert any("tag '': key is empty" in m for m in found)
    assert any("tag 'crm:n': value is not a string" in m for m in found)


def test_other_services_are_held_to_the_common_set() -> None:
    specs = [("aws:sesv2/emailIdentity:EmailIdentity", "id", {"tags": {"crm:x": "a#b"}})]
    found = messages(run(specs, RULE))
    assert len(found) == 1 and "common tag rules" in found[0] and "'#'" in found[0]


def test_provider_default_tags_meet_every_service() -> None:
    assert "@" not in STRICTEST.symbols and STRICTEST.value_max == 255
    ok = '{"tags": {"crm:stack": "dev", "pulumi:project": "crm-automations"}}'
    assert run([("pulumi:providers:aws", "eu-west-2", {"defaultTags": ok})], RULE) == []
    bad = {"tags": {"crm:owner": "ops@example.com"}}
    found = messages(run([("pulumi:providers:aws", "eu-west-2", {"defaultTags": bad})], RULE))
    assert len(found) == 1 and "default tags of provider eu-west-2" in found[0]
