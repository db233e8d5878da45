"""nothing-always-on, log-retention, queue-hygiene, table-hygiene, bucket-hygiene,
no-secrets-in-env."""

from __future__ import annotations

import json
from typing import Any

import pytest

from policies.testing import UNKNOWN_STRING, Spec
from tests.policies.pack_builders import (
    ACCESS_BLOCK,
    ACCOUNT,
    BUCKET,
    BUCKET_POLICY,
    FUNCTION,
    LOG_GROUP,
    QUEUE,
    QUEUE_POLICY,
    SECRET,
    bucket,
    compliant_stack,
    document,
    function,
    messages,
    queue_arn,
    run,
    table,
    tls_deny,
    work_queue,
)


def without(specs: list[Spec], resource_type: str, name: str | None = None) -> list[Spec]:
    return [s for s in specs if not (s[0] == resource_type and (name is None or s[1] == name))]


def update(specs: list[Spec], resource_type: str, name: str, **props: Any) -> list[Spec]:
    return [
        (t, n, {**p, **props}) if (t, n) == (resource_type, name) else (t, n, p)
        for t, n, p in specs
    ]


HYGIENE = (
    "nothing-always-on",
    "log-retention",
    "queue-hygiene",
    "table-hygiene",
    "bucket-hygiene",
    "no-secrets-in-env",
)


@pytest.mark.parametrize("rule", HYGIENE)
def test_compliant_stack_passes(rule: str) -> None:
    assert run(compliant_stack(), rule) == []
    assert run(compliant_stack(), rule, stack="prod", config={"environment": "dev"}) == []


# nothing-always-on -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "resource_type,props",
    [
        ("aws:ec2/natGateway:NatGateway", {}),
        ("aws:ec2/instance:Instance", {"instanceType": "t4g.nano"}),
        ("aws:ecs/service:Service", {}),
        ("aws:eks/cluster:Cluster", {}),
        ("aws:apigateway/restApi:RestApi", {"name": "x"}),
        ("aws:apigatewayv2/api:Api", {"protocolType": "HTTP"}),
        ("aws:rds/instance:Instance", {}),
        ("aws:rds/cluster:Cluster", {}),
        (
            "aws:lambda/provisionedConcurrencyConfig:ProvisionedConcurrencyConfig",
            {"provisionedConcurrentExecutions": 1},
        ),
        ("aws:dynamodb/table:Table", {"billingMode": "PROVISIONED"}),
        ("aws:dynamodb/table:Table", {}),
        ("aws:ec2/vpcEndpoint:VpcEndpoint", {"vpcEndpointType": "Interface"}),
        ("aws:lb/loadBalancer:LoadBalancer", {}),
        ("aws:elasticache/serverlessCache:ServerlessCache", {}),
    ],
)
def test_always_on_resources_are_rejected(resource_type: str, props: dict[str, Any]) -> None:
    found = run([(resource_type, "thing", props)], "nothing-always-on")
    assert len(found) == 1 and "always on" in found[0].message


@pytest.mark.parametrize(
    "resource_type,props",
    [
        ("aws:dynamodb/table:Table", {"billingMode": "PAY_PER_REQUEST"}),
        ("aws:ec2/vpcEndpoint:VpcEndpoint", {"vpcEndpointType": "Gateway"}),
        ("aws:lambda/functionUrl:FunctionUrl", {"authorizationType": "AWS_IAM"}),
        ("aws:scheduler/schedule:Schedule", {}),
        ("crm:index:ScopedLambda", {}),
    ],
)
def test_on_demand_resources_pass(resource_type: str, props: dict[str, Any]) -> None:
    assert run([(resource_type, "thing", props)], "nothing-always-on") == []


def test_allowed_types_are_exempt() -> None:
    specs: list[Spec] = [("aws:ec2/natGateway:NatGateway", "nat", {})]
    config = {"nothing-always-on": {"allowedTypes": ["aws:ec2/natGateway:NatGateway"]}}
    assert run(specs, "nothing-always-on", config=config) == []


# log-retention -----------------------------------------------------------------------------


def test_missing_log_group_is_rejected() -> None:
    specs = without(function("dm-block"), LOG_GROUP)
    assert messages(run(specs, "log-retention")) == [
        "function dev-dm-block logs to /aws/lambda/dev-dm-block, which this stack does not declare "
        "(Lambda would create it with no retention)"
    ]


@pytest.mark.parametrize("days", [None, 1, 14, 3653])
def test_retention_other_than_seven_days_is_rejected(days: int | None) -> None:
    specs = update(function("dm-block"), LOG_GROUP, "dm-block-logs", retentionInDays=days)
    found = run(specs, "log-retention")
    assert len(found) == 1 and "not 7" in found[0].message
    assert found[0].urn is not None and found[0].urn.endswith("::dm-block-logs")


def test_default_log_group_name_is_used_without_logging_config() -> None:
    specs = update(function("dm-block"), FUNCTION, "dm-block", loggingConfig=None)
    assert run(specs, "log-retention") == []


def test_custom_log_group_is_followed() -> None:
    specs = update(
        function("dm-block"), FUNCTION, "dm-block", loggingConfig={"logGroup": "/crm/dev/dm-block"}
    )
    assert run(specs, "log-retention") != []
    specs += [(LOG_GROUP, "custom", {"name": "/crm/dev/dm-block", "retentionInDays": 7})]
    assert run(specs, "log-retention") == []


def test_retention_is_configurable() -> None:
    config = {"log-retention": {"retentionDays": 14}}
    assert len(run(function("dm-block"), "log-retention", config=config)) == 1


# queue-hygiene -----------------------------------------------------------------------------


def test_queue_without_dlq_is_rejected() -> None:
    specs = update(work_queue("rrs-work"), QUEUE, "rrs-work", redrivePolicy=None)
    found = messages(run(specs, "queue-hygiene"))
    assert found == [
        "SQS queue dev-rrs-work-dlq has no dead-letter queue (redrivePolicy) and is no one's dead-letter target",
        "SQS queue dev-rrs-work has no dead-letter queue (redrivePolicy) and is no one's dead-letter target",
    ]


def test_standalone_dlq_used_as_a_failure_destination_passes() -> None:
    name = "dev-ler-dlq"
    specs: list[Spec] = [
        (QUEUE, "dlq", {"name": name, "sqsManagedSseEnabled": True}),
        (
            QUEUE_POLICY,
            "dlq-policy",
            {
                "queueUrl": f"https://sqs.eu-west-2.amazonaws.com/{ACCOUNT}/{name}",
                "policy": document(tls_deny("sqs", queue_arn(name))),
            },
        ),
    ]
    assert run(specs, "queue-hygiene") != []
    target = (
        "aws:cloudwatch/eventTarget:EventTarget",
        "t",
        {"rule": "r", "arn": "x", "deadLetterConfig": {"arn": queue_arn(name)}},
    )
    assert run([*specs, target], "queue-hygiene") == []
    mapping = (
        "aws:lambda/eventSourceMapping:EventSourceMapping",
        "m",
        {"destinationConfig": {"onFailure": {"destinationArn": queue_arn(name)}}},
    )
    assert run([*specs, mapping], "queue-hygiene") == []


def test_dlq_outside_the_stack_is_rejected() -> None:
    specs = without(
        without(work_queue("rrs-work"), QUEUE, "rrs-work-dlq"), QUEUE_POLICY, "rrs-work-dlq-policy"
    )
    assert any("not declared in this stack" in m for m in messages(run(specs, "queue-hygiene")))


def test_bad_max_receive_count_is_rejected() -> None:
    redrive = json.dumps(
        {"deadLetterTargetArn": queue_arn("dev-rrs-work-dlq"), "maxReceiveCount": 0}
    )
    specs = update(work_queue("rrs-work"), QUEUE, "rrs-work", redrivePolicy=redrive)
    assert any("maxReceiveCount" in m for m in messages(run(specs, "queue-hygiene")))


def test_unencrypted_queue_is_rejected() -> None:
    specs = update(work_queue("rrs-work"), QUEUE, "rrs-work", sqsManagedSseEnabled=False)
    assert messages(run(specs, "queue-hygiene")) == [
        "SQS queue dev-rrs-work is not encrypted (sqsManagedSseEnabled or kmsMasterKeyId)"
    ]
    specs = update(specs, QUEUE, "rrs-work", kmsMasterKeyId="alias/aws/sqs")
    assert run(specs, "queue-hygiene") == []


def test_queue_without_tls_policy_is_rejected() -> None:
    specs = without(work_queue("rrs-work"), QUEUE_POLICY, "rrs-work-policy")
    assert messages(run(specs, "queue-hygiene")) == [
        "SQS queue dev-rrs-work has no queue policy denying sqs:* when aws:SecureTransport is false"
    ]


def test_tls_deny_must_really_deny_insecure_transport() -> None:
    weak = {**tls_deny("sqs", "*"), "Condition": {"Bool": {"aws:SecureTransport": "true"}}}
    specs = update(work_queue("rrs-work"), QUEUE_POLICY, "rrs-work-policy", policy=document(weak))
    assert run(specs, "queue-hygiene") != []
    narrow = {**tls_deny("sqs", "*"), "Action": "sqs:SendMessage"}
    specs = update(work_queue("rrs-work"), QUEUE_POLICY, "rrs-work-policy", policy=document(narrow))
    assert run(specs, "queue-hygiene") != []


# table-hygiene -----------------------------------------------------------------------------


def test_table_without_pitr_is_rejected() -> None:
    found = messages(
        run([table("dm-pairs", pointInTimeRecovery={"enabled": False})], "table-hygiene")
    )
    assert found == ["DynamoDB table dev-dm-pairs has no point-in-time recovery"]


def test_provisioned_table_is_rejected() -> None:
    found = messages(run([table("dm-pairs", billingMode="PROVISIONED")], "table-hygiene"))
    assert found == ["DynamoDB table dev-dm-pairs is not on-demand (billingMode 'PROVISIONED')"]


def test_prod_tables_need_deletion_protection() -> None:
    specs = [table("dm-pairs")]
    assert run(specs, "table-hygiene") == []
    found = messages(run(specs, "table-hygiene", stack="prod"))
    assert found == ["DynamoDB table dev-dm-pairs has no deletion protection in environment prod"]
    assert run(specs, "table-hygiene", config={"environment": "prod"}) != []
    assert (
        run([table("dm-pairs", deletionProtectionEnabled=True)], "table-hygiene", stack="prod")
        == []
    )


def test_protected_environments_are_configurable() -> None:
    config = {"table-hygiene": {"protectedEnvironments": ["prod", "staging"]}}
    assert run([table("dm-pairs")], "table-hygiene", stack="staging", config=config) != []


# bucket-hygiene ----------------------------------------------------------------------------


def test_bucket_without_public_access_block_is_rejected() -> None:
    specs = without(bucket("ler-raw"), ACCESS_BLOCK)
    assert messages(run(specs, "bucket-hygiene")) == [
        f"S3 bucket dev-ler-raw-{ACCOUNT} has no BucketPublicAccessBlock"
    ]


def test_partial_public_access_block_is_rejected() -> None:
    specs = update(
        bucket("ler-raw"), ACCESS_BLOCK, "ler-raw-public-access", restrictPublicBuckets=False
    )
    assert messages(run(specs, "bucket-hygiene")) == [
        f"S3 bucket dev-ler-raw-{ACCOUNT}: public access block leaves restrictPublicBuckets off"
    ]


def test_bucket_without_tls_policy_is_rejected() -> None:
    specs = without(bucket("ler-raw"), BUCKET_POLICY)
    assert any("aws:SecureTransport" in m for m in messages(run(specs, "bucket-hygiene")))
    name = f"dev-ler-raw-{ACCOUNT}"
    only_bucket = document(tls_deny("s3", f"arn:aws:s3:::{name}"))
    specs = update(bucket("ler-raw"), BUCKET_POLICY, "ler-raw-policy", policy=only_bucket)
    assert run(specs, "bucket-hygiene") != []


def test_bucket_without_explicit_name_is_rejected() -> None:
    assert run([(BUCKET, "b", {"bucketPrefix": "dev-"})], "bucket-hygiene") != []


# no-secrets-in-env -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,value",
    [
        ("CRM_API_KEY", "pat-na1-0f1e2d3c"),
        ("WEBHOOK_SECRET", "s3cr3t-value"),
        ("DB_PASSWORD", "hunter2"),
        ("LINK_SIGNING_KEY", "c2VjcmV0"),
        ("SHOP_TOKEN", "anything"),
        ("ANY_NAME", "AKIAIOSFODNN7EXAMPLE"),
        ("STORE_URL", "https://admin:hunter2@shop.example.com"),
        ("SHOPIFY", "shpat_" + "a" * 32),
        ("LINK_TOKEN_TTL_DAYS", "thirty"),
        ("CRM_SECRET_NAME", "prod-dm-crm-write"),
        ("CRM_SECRET_NAME", UNKNOWN_STRING),
    ],
)
def test_secret_values_in_environment_are_rejected(name: str, value: str) -> None:
    found = run(function("dm-merge", env={name: value}), "no-secrets-in-env")
    assert len(found) == 1 and name in found[0].message


@pytest.mark.parametrize(
    "name,value",
    [
        (
            "CRM_SECRET_ARN",
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:dev-dm-crm-write-AbCdEf",
        ),
        ("CRM_SECRET_NAME", "dev-dm-crm-write"),
        ("SIGNING_KEY_SECRET", "shared-signing-key"),
        ("API_TOKEN_PARAM", "arn:aws:ssm:us-east-1:123456789012:parameter/dev/token"),
        ("LINK_TOKEN_TTL_DAYS", "30"),
        ("WEBHOOK_SECRET", ""),
        ("TABLE_NAME", "dev-dm-pairs"),
    ],
)
def test_references_to_secrets_pass(name: str, value: str) -> None:
    specs = [
        *function("dm-merge", env={name: value}),
        (SECRET, "s", {"name": "shared-signing-key"}),
    ]
    assert run(specs, "no-secrets-in-env") == []


def test_allowed_variables_are_skipped() -> None:
    config = {"no-secrets-in-env": {"allowedVariables": ["DB_PASSWORD"]}}
    assert (
        run(function("dm-merge", env={"DB_PASSWORD": "x"}), "no-secrets-in-env", config=config)
        == []
    )
