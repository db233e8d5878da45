"""The IAM document rules: no-wildcard-write, one-secret-per-grant, valid-iam."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from policies.testing import Spec
from tests.policies.pack_builders import (
    ACCOUNT,
    BUCKET_POLICY,
    QUEUE_POLICY,
    ROLE,
    ROLE_POLICY,
    SECRET,
    allow,
    arn,
    compliant_stack,
    document,
    function,
    messages,
    queue_arn,
    run,
    secret_arn,
    table_arn,
    tls_deny,
)

RAW = f"arn:aws:s3:::dev-ler-raw-{ACCOUNT}"


def role_policy(*statements: Mapping[str, Any], name: str = "raw") -> Spec:
    """A raw RolePolicy, outside any building block."""
    return (
        ROLE_POLICY,
        name,
        {"name": f"dev-{name}", "role": "dev-some-role", "policy": document(*statements)},
    )


# no-wildcard-write -----------------------------------------------------------------------


def test_compliant_stack_passes_the_iam_rules() -> None:
    for rule in ("no-wildcard-write", "one-secret-per-grant", "valid-iam"):
        assert run(compliant_stack(), rule) == [], rule


def test_raw_role_policy_put_item_on_star_is_rejected() -> None:
    found = run([role_policy(allow("dynamodb:PutItem", "*"))], "no-wildcard-write")
    assert len(found) == 1
    assert 'Resource "*" with dynamodb:PutItem' in found[0].message
    assert found[0].urn is not None and found[0].urn.endswith("::raw")


@pytest.mark.parametrize("resource", [RAW, f"{RAW}/*", f"{RAW}/inbound/*"])
def test_s3_put_wildcard_on_a_bucket_is_rejected(resource: str) -> None:
    found = run([role_policy(allow("s3:Put*", resource))], "no-wildcard-write")
    assert any("wildcard action 's3:Put*' reaches" in m for m in messages(found))


def test_not_action_reaching_get_secret_value_is_judged() -> None:
    statement = {
        "Effect": "Allow",
        "NotAction": "iam:*",
        "Resource": [secret_arn("a"), secret_arn("b")],
    }
    assert run([role_policy(statement)], "one-secret-per-grant") != []
    statement = {"Effect": "Allow", "NotAction": ["secretsmanager:*", "ssm:*"], "Resource": "*"}
    assert run([role_policy(statement)], "one-secret-per-grant") == []
    # Sparing Secrets Manager alone still lets the statement read every parameter.
    statement = {"Effect": "Allow", "NotAction": "secretsmanager:*", "Resource": "*"}
    assert run([role_policy(statement)], "one-secret-per-grant") != []


def parameter_arn(name: str) -> str:
    return arn("ssm", f"parameter/{name.lstrip('/')}")


def test_get_parameter_on_one_parameter_is_accepted() -> None:
    # secretStore: ssm. SecretSlot.grant_read() is one ssm:GetParameter on one parameter ARN.
    statement = allow("ssm:GetParameter", parameter_arn("/dev/dm-crm-read"))
    assert run([role_policy(statement)], "one-secret-per-grant") == []


@pytest.mark.parametrize(
    "statement",
    [
        allow("ssm:GetParameter", [parameter_arn("/dev/dm-crm-read"), parameter_arn("/dev/dm-crm-write")]),
        allow("ssm:GetParameter", parameter_arn("/dev/*")),
        allow("ssm:GetParameters", arn("ssm", "parameter/dev/dm-*")),
        allow("ssm:Get*", parameter_arn("/dev/dm-crm-read")),
        allow("ssm:GetParametersByPath", parameter_arn("/dev")),
        allow("ssm:GetParameterHistory", "*"),
    ],
)
def test_parameter_reads_beyond_one_parameter_are_rejected(statement: dict[str, Any]) -> None:
    # ssm:Get* reaches GetParametersByPath; the others name several parameters or a wildcard.
    assert run([role_policy(statement)], "one-secret-per-grant") != []


def test_put_parameter_on_a_wildcard_is_a_wildcard_write() -> None:
    found = run([role_policy(allow("ssm:PutParameter", parameter_arn("/dev/*")))], "no-wildcard-write")
    assert found != []


@pytest.mark.parametrize("action", ["*", "dynamodb:*", "sqs:Send*", "iam:*Role*", "s3:?utObject"])
def test_wildcard_actions_reaching_writes_are_rejected(action: str) -> None:
    found = run([role_policy(allow(action, table_arn("dev-dm-pairs")))], "no-wildcard-write")
    assert any(f"wildcard action {action!r}" in m for m in messages(found))


def test_read_only_wildcard_action_is_accepted() -> None:
    assert (
        run([role_policy(allow("dynamodb:Describe*", table_arn("dev-x")))], "no-wildcard-write")
        == []
    )


def test_object_arn_under_a_prefix_is_accepted() -> None:
    statement = allow(["s3:PutObject", "s3:GetObject"], [f"{RAW}/inbound/*", f"{RAW}/*"])
    assert run([role_policy(statement)], "no-wildcard-write") == []


@pytest.mark.parametrize(
    "resource",
    [
        "arn:aws:s3:::*",
        "arn:aws:s3:::dev-*/*",
        "arn:aws:s3:::dev-ler-raw/*/undo",
        table_arn("dev-*"),
        table_arn("dev-dm-pairs") + "/*",
        arn("dynamodb", "table/dev-dm-pairs", region="*"),
        arn("logs", "log-group:*"),
        arn("logs", "log-group:/aws/lambda/*:*"),
        queue_arn("dev-*"),
        arn("scheduler", "schedule/*"),
        arn("secretsmanager", "secret:dev-*"),
    ],
)
def test_write_on_an_arn_spanning_several_resources_is_rejected(resource: str) -> None:
    action = "s3:PutObject" if ":s3:" in resource else "dynamodb:PutItem"
    action = {
        "logs": "logs:PutLogEvents",
        "sqs": "sqs:SendMessage",
        "scheduler": "scheduler:CreateSchedule",
        "secretsmanager": "secretsmanager:PutSecretValue",
    }.get(resource.split(":")[2], action)
    found = run([role_policy(allow(action, resource))], "no-wildcard-write")
    assert any("spans more than one named resource" in m for m in messages(found)), resource


@pytest.mark.parametrize(
    "action,resource",
    [
        ("logs:PutLogEvents", arn("logs", "log-group:/aws/lambda/dev-dm-merge:*")),
        ("dynamodb:PutItem", table_arn("dev-dm-pairs") + "/index/*"),
        ("scheduler:CreateSchedule", arn("scheduler", "schedule/default/*")),
        ("secretsmanager:PutSecretValue", secret_arn("dev-dm-crm-write")),
    ],
)
def test_one_resource_wildcards_are_accepted(action: str, resource: str) -> None:
    assert run([role_policy(allow(action, resource))], "no-wildcard-write") == []


STAR_LIST = "dynamodb:ListStreams, xray:PutTraceSegments, xray:PutTelemetryRecords"


def test_only_resourceless_actions_are_accepted_on_star() -> None:
    assert run([role_policy(allow("dynamodb:ListStreams", "*"))], "no-wildcard-write") == []
    tracing = allow(["xray:PutTraceSegments", "xray:PutTelemetryRecords"], "*")
    assert run([role_policy(tracing)], "no-wildcard-write") == []
    found = run([role_policy(allow("dynamodb:GetItem", "*"))], "no-wildcard-write")
    assert messages(found) == [
        'RolePolicy dev-raw, statement #1: Resource "*" with dynamodb:GetItem; only '
        f'{STAR_LIST} may use "*"'
    ]
    # The exception is per action: another X-Ray write on "*" is still caught.
    found = run([role_policy(allow("xray:PutEncryptionConfig", "*"))], "no-wildcard-write")
    assert [m for m in messages(found) if "xray:PutEncryptionConfig" in m]


def test_resource_star_actions_are_configurable() -> None:
    specs = [role_policy(allow("xray:PutTraceSegments", "*"))]
    assert run(specs, "no-wildcard-write") == []
    config = {"no-wildcard-write": {"resourceStarActions": ["dynamodb:ListStreams"]}}
    assert run(specs, "no-wildcard-write", config=config) != []


def test_deny_tls_statement_is_accepted() -> None:
    specs = [
        (
            QUEUE_POLICY,
            "q-policy",
            {
                "queueUrl": "https://sqs.eu-west-2.amazonaws.com/1/dev-q",
                "policy": document(tls_deny("sqs", "*")),
            },
        ),
        (
            BUCKET_POLICY,
            "b-policy",
            {
                "bucket": "b",
                "policy": document(tls_deny("s3", ["arn:aws:s3:::b", "arn:aws:s3:::b/*"])),
            },
        ),
    ]
    for rule in ("no-wildcard-write", "valid-iam", "one-secret-per-grant"):
        assert run(specs, rule) == [], rule


def test_not_action_and_not_resource_in_an_allow_are_rejected() -> None:
    statement = {"Effect": "Allow", "NotAction": "iam:*", "NotResource": table_arn("x")}
    found = messages(run([role_policy(statement)], "no-wildcard-write"))
    assert any("NotAction" in m for m in found) and any("NotResource" in m for m in found)


def test_secret_policy_star_is_the_secret_itself() -> None:
    policy = document(
        allow(
            "secretsmanager:GetSecretValue",
            "*",
            Principal={"AWS": f"arn:aws:iam::{ACCOUNT}:role/dev-dm-merge-role"},
        )
    )
    specs = [
        ("aws:secretsmanager/secretPolicy:SecretPolicy", "p", {"secretArn": "x", "policy": policy})
    ]
    for rule in ("no-wildcard-write", "one-secret-per-grant", "valid-iam"):
        assert run(specs, rule) == [], rule


@pytest.mark.parametrize(
    "policy,expected",
    [
        (None, "has no policy document"),
        ("{not json", "is not valid JSON"),
        ({"Statement": []}, "is not a JSON string"),
        ("04da6b54-80e4-46f7-96ec-b56ff0331ba9", "unknown at preview: cannot be judged"),
        (json.dumps({"Version": "2012-10-17"}), "has no Statement"),
    ],
)
def test_unreadable_documents_are_violations(policy: object, expected: str) -> None:
    specs = [(ROLE_POLICY, "p", {"name": "p", "role": "r", "policy": policy})]
    for rule in ("no-wildcard-write", "one-secret-per-grant", "valid-iam"):
        found = messages(run(specs, rule))
        assert any(expected in m for m in found), (rule, found)


def test_inline_policies_of_a_role_are_judged() -> None:
    role = (
        ROLE,
        "r",
        {
            "name": "dev-r",
            "assumeRolePolicy": "{}",
            "inlinePolicies": [{"name": "x", "policy": document(allow("sqs:*", queue_arn("q")))}],
        },
    )
    found = messages(run([role], "no-wildcard-write"))
    assert any("inlinePolicies[0].policy" in m and "'sqs:*'" in m for m in found)


# one-secret-per-grant ----------------------------------------------------------------------


def test_get_secret_value_on_two_secrets_is_rejected() -> None:
    statement = allow(
        "secretsmanager:GetSecretValue",
        [secret_arn("dev-dm-crm-read"), secret_arn("dev-dm-crm-write")],
    )
    found = run([role_policy(statement)], "one-secret-per-grant")
    assert len(found) == 1 and "GetSecretValue on 2 resources" in found[0].message


@pytest.mark.parametrize(
    "resource",
    [
        "*",
        arn("secretsmanager", "secret:dev-*"),
        arn("secretsmanager", "secret:dev-dm-*-??????"),
        arn("secretsmanager", "secret:dev-dm-crm-write-??????", region="*"),
        table_arn("dev-dm-pairs"),
    ],
)
def test_get_secret_value_must_name_one_secret(resource: str) -> None:
    found = run(
        [role_policy(allow("secretsmanager:GetSecretValue", resource))], "one-secret-per-grant"
    )
    assert messages(found) and all("not one secret's ARN" in m for m in messages(found))


def test_wildcard_actions_reaching_get_secret_value_are_judged() -> None:
    statement = allow("secretsmanager:Get*", [secret_arn("a"), secret_arn("b")])
    assert run([role_policy(statement)], "one-secret-per-grant") != []


def test_one_secret_grants_are_accepted() -> None:
    specs: list[Spec] = [
        role_policy(
            allow("secretsmanager:GetSecretValue", secret_arn("dev-dm-crm-write")),
            allow(
                "secretsmanager:GetSecretValue",
                arn("secretsmanager", "secret:dev-dm-crm-read-AbCdEf"),
            ),
        ),
        (SECRET, "s", {"name": "dev-dm-crm-write"}),
    ]
    assert run(specs, "one-secret-per-grant") == []


# valid-iam ---------------------------------------------------------------------------------


def test_typo_action_is_rejected() -> None:
    found = run([role_policy(allow("dynamodb:PutItems", table_arn("dev-x")))], "valid-iam")
    assert any("action 'dynamodb:PutItems' does not exist" in m for m in messages(found))


@pytest.mark.parametrize(
    "action", ["dynamo:PutItem", "dynamodb:Put*Items", "PutItem", "dynamodb:Put Item"]
)
def test_unknown_or_malformed_actions_are_rejected(action: str) -> None:
    assert run([role_policy(allow(action, table_arn("dev-x")))], "valid-iam") != []


@pytest.mark.parametrize(
    "action,resource",
    [
        ("dynamodb:PutItem", arn("dynamodb", "tables/dev-x")),
        ("dynamodb:PutItem", queue_arn("dev-x")),
        ("s3:GetObject", "arn:aws:s3:::bucket-without-key"),
        ("sqs:SendMessage", "dev-upsr-jobs"),
        ("secretsmanager:GetSecretValue", arn("secretsmanager", "dev-dm-crm-write")),
        ("bedrock:InvokeModel", "arn:aws:bedrock:eu-west-2:123456789012:foundation-model/x"),
    ],
)
def test_wrong_arn_shape_is_rejected(action: str, resource: str) -> None:
    found = run([role_policy(allow(action, resource))], "valid-iam")
    assert found, (action, resource)


@pytest.mark.parametrize(
    "action,resource",
    [
        ("logs:PutLogEvents", arn("logs", "log-group:/aws/lambda/dev-dm-merge:*")),
        ("logs:CreateLogStream", arn("logs", "log-group:/aws/lambda/dev-dm-merge:*")),
        ("dynamodb:Query", table_arn("dev-x") + "/index/by-state"),
        ("dynamodb:GetRecords", table_arn("dev-x") + "/stream/*"),
        ("s3:PutObject", "arn:aws:s3:::dev-ler-raw-1/inbound/*"),
        ("s3:ListBucket", "arn:aws:s3:::dev-ler-raw-1"),
        (
            "bedrock:InvokeModel",
            "arn:aws:bedrock:::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
        ),
        (
            "bedrock:InvokeModel",
            arn("bedrock", "inference-profile/global.anthropic.claude-sonnet-4-6"),
        ),
        ("sms-voice:SendTextMessage", arn("sms-voice", "pool/pool-1234")),
        ("ses:SendEmail", arn("ses", "identity/example.com")),
        ("events:PutEvents", arn("events", "event-bus/default")),
        ("iam:PassRole", f"arn:aws:iam::{ACCOUNT}:role/dev-x"),
        ("lambda:InvokeFunction", arn("lambda", "function:dev-dm-merge")),
    ],
)
def test_right_arn_shapes_are_accepted(action: str, resource: str) -> None:
    assert run([role_policy(allow(action, resource))], "valid-iam") == [], (action, resource)


def test_action_without_resource_types_needs_star() -> None:
    found = run([role_policy(allow("dynamodb:ListStreams", table_arn("dev-x")))], "valid-iam")
    assert any("no resource-level permissions" in m for m in messages(found))


def test_action_granted_on_nothing_it_accepts_is_rejected() -> None:
    statement = allow(["dynamodb:PutItem", "sqs:SendMessage"], [table_arn("dev-x")])
    found = messages(run([role_policy(statement)], "valid-iam"))
    assert found == [
        "RolePolicy dev-raw, statement #1 sqs:SendMessage accepts none of the statement's resources"
    ]


@pytest.mark.parametrize(
    "statement,expected",
    [
        ({"Effect": "allow", "Action": "sqs:SendMessage", "Resource": "*"}, "Effect 'allow'"),
        ({"Effect": "Allow", "Resource": "*"}, "exactly one of Action and NotAction"),
        (
            {"Effect": "Allow", "Action": "sqs:SendMessage"},
            "exactly one of Resource and NotResource",
        ),
        (
            {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*", "Principal": "*"},
            "identity policy",
        ),
        (
            {"Effect": "Allow", "Action": ["sqs:SendMessage", 3], "Resource": "*"},
            "not a known string",
        ),
    ],
)
def test_malformed_statements_are_rejected(statement: dict[str, object], expected: str) -> None:
    found = messages(run([role_policy(statement)], "valid-iam"))
    assert any(expected in m for m in found), found


def test_resource_policy_needs_a_principal() -> None:
    policy = document(allow("sqs:SendMessage", queue_arn("dev-q")))
    specs = [(QUEUE_POLICY, "qp", {"queueUrl": "https://x/1/dev-q", "policy": policy})]
    assert any("no Principal" in m for m in messages(run(specs, "valid-iam")))


def test_wrong_version_is_rejected() -> None:
    policy = json.dumps(
        {"Version": "2012-10-18", "Statement": [allow("sqs:SendMessage", queue_arn("q"))]}
    )
    specs = [(ROLE_POLICY, "p", {"name": "p", "role": "r", "policy": policy})]
    assert any("Version" in m for m in messages(run(specs, "valid-iam")))


def test_the_documents_of_a_whole_function_are_valid() -> None:
    specs = function(
        "ler-push",
        allow("secretsmanager:GetSecretValue", secret_arn("dev-ler-crm-key")),
        allow(["dynamodb:PutItem", "dynamodb:UpdateItem"], table_arn("dev-ler-identity")),
        allow("s3:PutObject", "arn:aws:s3:::dev-ler-records-1/*"),
    )
    assert run(specs, "valid-iam") == []


# no-wildcard-write: a deployer's scope (namePrefixes) ----------------------------------------

DEPLOYER = {"no-wildcard-write": {"namePrefixes": ["dev"]}}


@pytest.mark.parametrize(
    "resource",
    [
        table_arn("dev-*"),
        arn("logs", "log-group:/aws/lambda/dev-*"),
        arn("ssm", "parameter/dev/*"),
        f"arn:aws:s3:::dev-*-{ACCOUNT}",
    ],
)
def test_name_prefixes_admit_a_wildcard_after_the_stack_prefix(resource: str) -> None:
    statement = allow("dynamodb:CreateTable", resource)
    assert run([role_policy(statement)], "no-wildcard-write") != []  # off by default
    assert run([role_policy(statement)], "no-wildcard-write", config=DEPLOYER) == []


@pytest.mark.parametrize(
    "resource",
    [table_arn("*"), table_arn("prod-*"), table_arn("devx-*"), arn("sqs", "*-dev-queue")],
)
def test_name_prefixes_refuse_a_wildcard_outside_the_prefix(resource: str) -> None:
    found = run([role_policy(allow("dynamodb:DeleteTable", resource))], "no-wildcard-write", config=DEPLOYER)
    assert len(found) == 1 and "spans more than one named resource" in found[0].message


def test_event_source_mappings_pass_only_when_pinned_to_prefixed_functions() -> None:
    mappings = arn("lambda", "event-source-mapping:*")
    pinned = {"ArnLike": {"lambda:FunctionArn": arn("lambda", "function:dev-*")}}
    loose = {"ArnLike": {"lambda:FunctionArn": arn("lambda", "function:*")}}
    statement = allow("lambda:DeleteEventSourceMapping", mappings, Condition=pinned)
    assert run([role_policy(statement)], "no-wildcard-write", config=DEPLOYER) == []
    for condition in (loose, None):
        extra = {"Condition": condition} if condition else {}
        unpinned = allow("lambda:DeleteEventSourceMapping", mappings, **extra)
        assert run([role_policy(unpinned)], "no-wildcard-write", config=DEPLOYER) != []


# one-secret-per-grant: AWS's public parameters hold no secret ---------------------------------


def test_a_public_parameter_read_is_not_a_secret_grant() -> None:
    public = "arn:aws:ssm:eu-west-2:*:parameter/aws/service/powertools/python/latest"
    assert run([role_policy(allow("ssm:GetParameter", public))], "one-secret-per-grant") == []
    mixed = allow("ssm:GetParameter", [public, arn("ssm", "parameter/dev/x")])
    assert run([role_policy(mixed)], "one-secret-per-grant") != []
