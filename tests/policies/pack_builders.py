"""Builders for small stacks that follow the project's conventions, and a runner per rule.

Each builder returns ``(type, name, props)`` specs with the engine's camelCase properties; a
test starts from a compliant stack, breaks one thing, and checks that exactly the expected
rule speaks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from policies.pack import POLICIES_BY_NAME
from policies.runner import Violation, evaluate
from policies.testing import Spec, make_resources

ACCOUNT = "123456789012"
REGION = "eu-west-2"
PREFIX = "dev"
HAIKU = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
HAIKU_MODEL = "anthropic.claude-haiku-4-5-20251001-v1:0"

ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
FUNCTION = "aws:lambda/function:Function"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
FUNCTION_URL = "aws:lambda/functionUrl:FunctionUrl"
PERMISSION = "aws:lambda/permission:Permission"
TABLE = "aws:dynamodb/table:Table"
QUEUE = "aws:sqs/queue:Queue"
QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
BUCKET = "aws:s3/bucket:Bucket"
ACCESS_BLOCK = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
SECRET = "aws:secretsmanager/secret:Secret"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
ALERTS = f"arn:aws:sns:{REGION}:{ACCOUNT}:{PREFIX}-alarms"


def arn(service: str, resource: str, *, region: str = REGION, account: str = ACCOUNT) -> str:
    return f"arn:aws:{service}:{region}:{account}:{resource}"


def secret_arn(name: str) -> str:
    return arn("secretsmanager", f"secret:{name}-??????")


def table_arn(name: str) -> str:
    return arn("dynamodb", f"table/{name}")


def queue_arn(name: str) -> str:
    return arn("sqs", name)


def allow(
    actions: str | Sequence[str], resources: str | Sequence[str], **extra: Any
) -> dict[str, Any]:
    statement: dict[str, Any] = {"Effect": "Allow", "Action": actions, "Resource": resources}
    statement.update(extra)
    return statement


def document(*statements: Mapping[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def tls_deny(service: str, resources: str | Sequence[str]) -> dict[str, Any]:
    return {
        "Sid": "DenyInsecureTransport",
        "Effect": "Deny",
        "Principal": "*",
        "Action": f"{service}:*",
        "Resource": resources,
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }


LAMBDA_TRUST = document(
    {
        "Effect": "Allow",
        "Principal": {"Service": "lambda.amazonaws.com"},
        "Action": "sts:AssumeRole",
        "Condition": {"StringEquals": {"aws:SourceAccount": ACCOUNT}},
    }
)


def function(
    seed: str,
    *statements: Mapping[str, Any],
    url: str | None = None,
    env: Mapping[str, Any] | None = None,
    role_name: str | None = None,
    trust: str = LAMBDA_TRUST,
    prefix: str = PREFIX,
    alarms: bool = True,
    reserved: int | None = 10,
) -> list[Spec]:
    """A ScopedLambda-like function: role, inline policy, log group, function, optional URL,
    and (unless ``alarms=False``) an Errors and a Throttles alarm of its own."""
    system = seed.split("-", 1)[0]
    name = f"{prefix}-{seed}"
    role = role_name or f"{name}-role"
    group = f"/aws/lambda/{name}"
    tags = {"crm:stack": prefix, "crm:system": system, "crm:function": seed}
    logs = allow(
        ["logs:CreateLogStream", "logs:PutLogEvents"],
        arn("logs", f"log-group:{group}:*"),
        Sid="WriteOwnLogs",
    )
    specs: list[Spec] = [
        (LOG_GROUP, f"{seed}-logs", {"name": group, "retentionInDays": 7}),
        (ROLE, f"{seed}-role", {"name": role, "assumeRolePolicy": trust, "tags": tags}),
        (
            ROLE_POLICY,
            f"{seed}-policy",
            {"name": f"{name}-grants", "role": role, "policy": document(logs, *statements)},
        ),
        (
            FUNCTION,
            seed,
            {
                "name": name,
                "role": f"arn:aws:iam::{ACCOUNT}:role/{role}",
                "runtime": "python3.14",
                "architectures": ["arm64"],
                "tags": tags,
                "environment": {"variables": {"CRM_STACK": prefix, **(env or {})}},
                "loggingConfig": {"logFormat": "JSON", "logGroup": group},
                # A public URL's function is capped as ScopedLambda caps it (publicConcurrency).
                **(
                    {"reservedConcurrentExecutions": reserved}
                    if url == "NONE" and reserved is not None
                    else {}
                ),
            },
        ),
    ]
    if alarms:
        specs += function_alarms(name)
    if url is not None:
        specs.append(
            (FUNCTION_URL, f"{seed}-url", {"functionName": name, "authorizationType": url})
        )
    if url == "NONE":
        specs.append(
            (
                PERMISSION,
                f"{seed}-url-public",
                {
                    "function": name,
                    "action": "lambda:InvokeFunctionUrl",
                    "principal": "*",
                    "functionUrlAuthType": "NONE",
                },
            )
        )
        specs.append(
            (
                PERMISSION,
                f"{seed}-url-invoke",
                {
                    "function": name,
                    "action": "lambda:InvokeFunction",
                    "principal": "*",
                    "invokedViaFunctionUrl": True,
                },
            )
        )
    return specs


def table(seed: str, **overrides: Any) -> Spec:
    props: dict[str, Any] = {
        "name": f"{PREFIX}-{seed}",
        "billingMode": "PAY_PER_REQUEST",
        "hashKey": "pk",
        "attributes": [{"name": "pk", "type": "S"}],
        "pointInTimeRecovery": {"enabled": True},
        "deletionProtectionEnabled": False,
    }
    props.update(overrides)
    return (TABLE, seed, props)


def alarm(name: str, namespace: str, metric: str, dimensions: Mapping[str, str], **props: Any) -> Spec:
    """A MetricAlarm notifying the alert topic."""
    return (
        ALARM,
        name,
        {
            "name": name,
            "namespace": namespace,
            "metricName": metric,
            "dimensions": dict(dimensions),
            "comparisonOperator": "GreaterThanThreshold",
            "threshold": 0,
            "alarmActions": [ALERTS],
            **props,
        },
    )


def function_alarms(name: str) -> list[Spec]:
    """An Errors and a Throttles alarm of function ``name`` (the stack itself watches throttles
    once per region: :func:`regional_throttles`)."""
    return [
        alarm(f"{name}-{metric.lower()}", "AWS/Lambda", metric, {"FunctionName": name})
        for metric in ("Errors", "Throttles")
    ]


def regional_throttles() -> Spec:
    """The stack's Throttles alarm over every function of the region (no dimension)."""
    return alarm(f"{PREFIX}-lambda-throttles-{REGION}", "AWS/Lambda", "Throttles", {})


def alarms_topic() -> list[Spec]:
    """The region's alert topic the builders' alarms notify, admitting this account's alarms."""
    admit = {
        "Sid": "CloudwatchPublishes",
        "Effect": "Allow",
        "Principal": {"Service": "cloudwatch.amazonaws.com"},
        "Action": "sns:Publish",
        "Resource": ALERTS,
        "Condition": {
            "StringEquals": {"aws:SourceAccount": ACCOUNT},
            "ArnLike": {"aws:SourceArn": f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:*"},
        },
    }
    return [
        ("aws:sns/topic:Topic", "alarms", {"name": f"{PREFIX}-alarms"}),
        (
            "aws:sns/topicPolicy:TopicPolicy",
            "alarms-policy",
            {"arn": ALERTS, "policy": document(admit, tls_deny("sns", ALERTS))},
        ),
    ]


def with_alert_topic(specs: Iterable[Spec]) -> list[Spec]:
    """``specs`` plus the alert topic when an alarm notifies it and it is not declared: the
    program always declares the topic beside the alarms (components/stack.py)."""
    found = list(specs)
    notifies = any(
        t == ALARM and ALERTS in (p.get("alarmActions") or []) for t, _, p in found
    )
    declared = any(t == "aws:sns/topic:Topic" and p.get("name") == f"{PREFIX}-alarms" for t, _, p in found)
    return found + alarms_topic() if notifies and not declared else found


def depth_alarm(queue: str) -> Spec:
    """The alarm WorkQueue declares on its dead-letter queue ``queue``."""
    return alarm(
        f"{queue}-depth", "AWS/SQS", "ApproximateNumberOfMessagesVisible", {"QueueName": queue}
    )


def work_queue(seed: str, *, max_receive_count: int = 5, alarms: bool = True) -> list[Spec]:
    """A WorkQueue-like queue with its DLQ, SSE and TLS-only policies, and the DLQ's alarm."""
    name, dlq = f"{PREFIX}-{seed}", f"{PREFIX}-{seed}-dlq"
    url = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}"
    redrive = json.dumps(
        {"deadLetterTargetArn": queue_arn(dlq), "maxReceiveCount": max_receive_count}
    )
    return [
        (QUEUE, f"{seed}-dlq", {"name": dlq, "sqsManagedSseEnabled": True}),
        (
            QUEUE_POLICY,
            f"{seed}-dlq-policy",
            {"queueUrl": f"{url}/{dlq}", "policy": document(tls_deny("sqs", queue_arn(dlq)))},
        ),
        (QUEUE, seed, {"name": name, "sqsManagedSseEnabled": True, "redrivePolicy": redrive}),
        (
            QUEUE_POLICY,
            f"{seed}-policy",
            {"queueUrl": f"{url}/{name}", "policy": document(tls_deny("sqs", queue_arn(name)))},
        ),
        *([depth_alarm(dlq)] if alarms else []),
    ]


def bucket(seed: str) -> list[Spec]:
    """A PrivateBucket-like bucket: public access block and TLS-only policy."""
    name = f"{PREFIX}-{seed}-{ACCOUNT}"
    return [
        (BUCKET, seed, {"bucket": name}),
        (
            ACCESS_BLOCK,
            f"{seed}-public-access",
            {
                "bucket": name,
                "blockPublicAcls": True,
                "blockPublicPolicy": True,
                "ignorePublicAcls": True,
                "restrictPublicBuckets": True,
            },
        ),
        (
            BUCKET_POLICY,
            f"{seed}-policy",
            {
                "bucket": name,
                "policy": document(
                    tls_deny("s3", [f"arn:aws:s3:::{name}", f"arn:aws:s3:::{name}/*"])
                ),
            },
        ),
    ]


def compliant_stack() -> list[Spec]:
    """A little of every system, all by the rules."""
    raw = f"arn:aws:s3:::{PREFIX}-ler-raw-{ACCOUNT}"
    return [
        table("dm-merges"),
        table("upsr-offers", streamEnabled=True, streamViewType="NEW_IMAGE"),
        (SECRET, "dm-crm-write", {"name": f"{PREFIX}-dm-crm-write"}),
        *work_queue("upsr-jobs"),
        *bucket("ler-raw"),
        *function(
            "dm-merge",
            allow("dynamodb:PutItem", table_arn(f"{PREFIX}-dm-merges")),
            allow("secretsmanager:GetSecretValue", secret_arn(f"{PREFIX}-dm-crm-write")),
            allow("s3:PutObject", f"{raw}/undo/*"),
            url="NONE",
            env={"CRM_WRITE_SECRET_NAME": f"{PREFIX}-dm-crm-write", "LINK_TOKEN_TTL_DAYS": "30"},
        ),
        *function(
            "upsr-picker",
            allow(
                ["bedrock:InvokeModel"],
                [
                    arn("bedrock", f"inference-profile/{HAIKU}"),
                    f"arn:aws:bedrock:{REGION}::foundation-model/{HAIKU_MODEL}",
                    f"arn:aws:bedrock:::foundation-model/{HAIKU_MODEL}",
                ],
            ),
            allow(
                [
                    "sqs:ReceiveMessage",
                    "sqs:DeleteMessage",
                    "sqs:ChangeMessageVisibility",
                    "sqs:GetQueueAttributes",
                ],
                queue_arn(f"{PREFIX}-upsr-jobs"),
            ),
            allow(
                ["dynamodb:GetItem", "dynamodb:Query"],
                [
                    table_arn(f"{PREFIX}-upsr-offers"),
                    table_arn(f"{PREFIX}-upsr-offers") + "/index/*",
                ],
            ),
            allow(
                ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
                table_arn(f"{PREFIX}-upsr-offers") + "/stream/*",
            ),
            allow("dynamodb:ListStreams", "*"),
            allow(
                "sms-voice:SendTextMessage", arn("sms-voice", "phone-number/phone-0123456789abcdef")
            ),
            allow("scheduler:CreateSchedule", arn("scheduler", "schedule/default/*")),
        ),
        *function(
            "ls-report", allow("dynamodb:Query", table_arn(f"{PREFIX}-ls-touches")), url="AWS_IAM"
        ),
    ]


def run(
    specs: Iterable[Spec],
    policy: str | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    stack: str = "dev",
    depends_on: Mapping[str, Sequence[str]] | None = None,
) -> list[Violation]:
    """Violations of one policy (or the whole pack) over ``specs``."""
    resources = make_resources(with_alert_topic(specs), stack=stack, depends_on=depends_on)
    chosen = [POLICIES_BY_NAME[policy]] if policy else None
    return evaluate(resources, config, policies=chosen)


def messages(violations: Iterable[Violation]) -> list[str]:
    return [v.message for v in violations]


# Service-to-service builders ------------------------------------------------------------------

SCHEDULE = "aws:scheduler/schedule:Schedule"
SCHEDULE_GROUP = "aws:scheduler/scheduleGroup:ScheduleGroup"
TOPIC = "aws:sns/topic:Topic"
TOPIC_POLICY = "aws:sns/topicPolicy:TopicPolicy"
KMS_KEY = "aws:kms/key:Key"
BUDGET = "aws:budgets/budget:Budget"
MAPPING = "aws:lambda/eventSourceMapping:EventSourceMapping"
EVENT_RULE = "aws:cloudwatch/eventRule:EventRule"
EVENT_TARGET = "aws:cloudwatch/eventTarget:EventTarget"


def group_arn(group: str) -> str:
    return arn("scheduler", f"schedule-group/{group}")


def scheduler_trust(source_arn: str | None, *, account: bool = True) -> str:
    """A trust policy admitting Scheduler with the given aws:SourceArn (None: none)."""
    condition: dict[str, Any] = {}
    if account:
        condition["StringEquals"] = {"aws:SourceAccount": ACCOUNT}
    if source_arn is not None:
        condition["ArnEquals"] = {"aws:SourceArn": source_arn}
    return document(
        {
            "Effect": "Allow",
            "Principal": {"Service": "scheduler.amazonaws.com"},
            "Action": "sts:AssumeRole",
            "Condition": condition,
        }
    )


def dead_letter_queue(seed: str) -> list[Spec]:
    """A standalone WorkQueue-like DLQ / failure queue: SSE, TLS-only policy, depth alarm."""
    name = f"{PREFIX}-{seed}"
    url = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{name}"
    return [
        (QUEUE, seed, {"name": name, "sqsManagedSseEnabled": True}),
        (
            QUEUE_POLICY,
            f"{seed}-policy",
            {"queueUrl": url, "policy": document(tls_deny("sqs", queue_arn(name)))},
        ),
        depth_alarm(name),
    ]


def scheduled_job(seed: str, target: str, *, group: str, trust: str | None = None) -> list[Spec]:
    """A ScheduledJob-like schedule in ``group`` with its own role invoking ``target``, its own
    DLQ (the role may send there), and the target's on-failure destination."""
    name, role = f"{PREFIX}-{seed}", f"{PREFIX}-{seed}-schedule-role"
    dlq = queue_arn(f"{name}-schedule-dlq")
    failures = queue_arn(f"{PREFIX}-{target}-failures")
    return [
        (
            ROLE,
            f"{seed}-role",
            {"name": role, "assumeRolePolicy": trust or scheduler_trust(group_arn(group))},
        ),
        (
            ROLE_POLICY,
            f"{seed}-policy",
            {
                "name": f"{name}-invoke",
                "role": role,
                "policy": document(
                    allow("lambda:InvokeFunction", arn("lambda", f"function:{PREFIX}-{target}")),
                    allow("sqs:SendMessage", dlq),
                ),
            },
        ),
        (
            SCHEDULE,
            seed,
            {
                "name": name,
                "groupName": group,
                "scheduleExpression": "rate(1 hour)",
                "target": {
                    "arn": arn("lambda", f"function:{PREFIX}-{target}"),
                    "roleArn": f"arn:aws:iam::{ACCOUNT}:role/{role}",
                    "deadLetterConfig": {"arn": dlq},
                },
            },
        ),
        *dead_letter_queue(f"{seed}-schedule-dlq"),
        (
            "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig",
            f"{target}-async",
            {
                "functionName": f"{PREFIX}-{target}",
                "destinationConfig": {"onFailure": {"destination": failures}},
            },
        ),
        *dead_letter_queue(f"{target}-failures"),
    ]


def budgets_condition() -> dict[str, Any]:
    return {
        "StringEquals": {"aws:SourceAccount": ACCOUNT},
        "ArnLike": {"aws:SourceArn": f"arn:aws:budgets::{ACCOUNT}:*"},
    }


def alert_topic(
    seed: str,
    *,
    kms: str | None = "alias",
    key_statements: Sequence[Mapping[str, Any]] | None = None,
) -> list[Spec]:
    """An AlertTopic-like topic Budgets publishes to, under its own key (``kms="alias"``),
    another ``kmsMasterKeyId`` (e.g. ``alias/aws/sns``) or none."""
    name = f"{PREFIX}-{seed}"
    topic = arn("sns", name)
    alias = f"alias/{name}"
    root = {
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
        "Action": "kms:*",
        "Resource": "*",
    }
    budgets_key = {
        "Effect": "Allow",
        "Principal": {"Service": "budgets.amazonaws.com"},
        "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
        "Resource": "*",
        "Condition": budgets_condition(),
    }
    statements = list(key_statements) if key_statements is not None else [root, budgets_key]
    key_id = alias if kms == "alias" else kms
    topic_props: dict[str, Any] = {"name": name}
    if key_id is not None:
        topic_props["kmsMasterKeyId"] = key_id
    return [
        (
            KMS_KEY,
            f"{seed}-key",
            {
                "enableKeyRotation": True,
                "policy": document(*statements),
                "tags": {"crm:kms-alias": alias},
            },
        ),
        (TOPIC, seed, topic_props),
        (
            TOPIC_POLICY,
            f"{seed}-policy",
            {
                "arn": topic,
                "policy": document(
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "budgets.amazonaws.com"},
                        "Action": "sns:Publish",
                        "Resource": topic,
                        "Condition": budgets_condition(),
                    }
                ),
            },
        ),
        (
            BUDGET,
            f"{seed}-budget",
            {"name": f"{name}-monthly", "notifications": [{"subscriberSnsTopicArns": [topic]}]},
        ),
    ]


def stream_mapping(seed: str, function_seed: str, table_seed: str) -> Spec:
    """A DynamoDB-stream event source mapping of ``function_seed`` on ``table_seed``."""
    return (
        MAPPING,
        seed,
        {
            "functionName": f"{PREFIX}-{function_seed}",
            "eventSourceArn": table_arn(f"{PREFIX}-{table_seed}")
            + "/stream/2026-01-01T00:00:00.000",
            "startingPosition": "TRIM_HORIZON",
        },
    )


def queue_mapping(
    seed: str, function_seed: str, queue_seed: str, *, maximum_concurrency: int | None = 5
) -> Spec:
    """An SQS event source mapping of ``function_seed`` on ``queue_seed`` (paced, as
    queue-consumers-paced asks, unless ``maximum_concurrency`` is None)."""
    props: dict[str, Any] = {
        "functionName": f"{PREFIX}-{function_seed}",
        "eventSourceArn": queue_arn(f"{PREFIX}-{queue_seed}"),
    }
    if maximum_concurrency is not None:
        props["scalingConfig"] = {"maximumConcurrency": maximum_concurrency}
    return (MAPPING, seed, props)
