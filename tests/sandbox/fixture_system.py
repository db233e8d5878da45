"""A small fixture system built from the blocks, used to test the sandbox engine.

Every kind of trigger the sandbox wires appears once: a public Function URL (shared-secret
header), an IAM-auth Function URL, an SQS queue with filter criteria, a DynamoDB stream with an
on-failure queue, an EventBridge rule, S3 notifications on two prefixes fed by an SES mail
lane, a recurring schedule and per-request one-off schedules created by a handler. The handler
modules live in ``tests/sandbox/fixture_handlers`` and are named ``handlers.sbxfix.functions.<module>``
in the graph; ``resolve_handler`` maps them for the sandbox.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

from components.arns import Arns
from components.config import ModelChoice, from_pulumi_config
from components.deployment import Deployment
from components.grants import Grant
from components.guarded_table import GuardedTable, GuardedTableArgs, Index, Key
from components.inbound_mail_lane import InboundMailLane, InboundMailLaneArgs, mail_writer
from components.mail_identity import MailIdentities
from components.models import model_grant
from components.offline.engine import ACCOUNT_ID, Graph, run_program, stack_config_values
from components.offline.program import without_archives
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

REGION = "eu-west-2"
MODEL = ModelChoice()
HANDLERS = "tests.sandbox.fixture_handlers"

NOTHING = NoPersonalData("a test fixture's made-up data")


def code(module: str) -> FunctionCode:
    return FunctionCode(f"handlers.sbxfix.functions.{module}.handler")


def resolve_handler(dotted: str) -> str:
    """The sandbox handler resolver for the fixture: handlers.sbxfix.functions.x -> tests...x."""
    return dotted.replace("handlers.sbxfix.functions", HANDLERS, 1)


class FixtureSystem(pulumi.ComponentResource):
    """The component every fixture block is parented to (it carries the region provider)."""

    def __init__(self, opts: pulumi.ResourceOptions) -> None:
        super().__init__("crm:index:SandboxFixture", "tst", None, opts)


def fixture_blocks(
    d: Deployment, opts: pulumi.ResourceOptions, drop: tuple[str, str] | None = None
) -> dict[str, Any]:
    """The fixture system. ``drop=(function, action)`` leaves that grant out of the role."""

    def keep(function: str, grants: list[Grant]) -> tuple[Grant, ...]:
        if drop is None or drop[0] != function:
            return tuple(grants)
        kept = []
        for g in grants:
            actions = tuple(a for a in g.actions if a != drop[1])
            if actions:
                kept.append(Grant(g.sid, actions, g.resources, g.conditions))
        return tuple(kept)

    tickets = GuardedTable(
        "tst-tickets",
        GuardedTableArgs(
            d,
            "tst-tickets",
            Key("ticket_id"),
            indexes=(Index("by-state", Key("state"), Key("due")),),
            ttl_attribute="expires_at",
            stream="NEW_IMAGE",
            personal_data=NOTHING,
        ),
        opts,
    )
    failures = WorkQueue(
        "tst-failures",
        WorkQueueArgs(
            d,
            "tst-failures",
            dead_letter=True,
            service_senders=(
                ServiceSender("events.amazonaws.com", d.arns.event_rule("dev-tst-triaged")),
            ),
            personal_data=NOTHING,
        ),
        opts,
    )
    work = WorkQueue(
        "tst-work",
        WorkQueueArgs(
            d, "tst-work", max_receive_count=3, visibility_timeout_s=180, personal_data=NOTHING
        ),
        opts,
    )
    lane = InboundMailLaneArgs(
        d, "tst-inbound", ("help@example.com",), f"dev-tst-inbox-{d.account_id}", "mail/"
    )
    inbox = PrivateBucket(
        "tst-inbox",
        PrivateBucketArgs(
            d,
            "tst-inbox",
            versioned=True,
            service_writers=(mail_writer(lane),),
            personal_data=NOTHING,
        ),
        opts,
    )
    InboundMailLane("tst-inbound", lane, opts)
    key = SecretSlot(
        "tst-key", SecretSlotArgs(d, "tst-key", "shared secret of the intake URL"), opts
    )

    intake = ScopedLambda(
        "tst-intake",
        ScopedLambdaArgs(
            d,
            "tst-intake",
            "takes tickets from the URL and the inbox",
            code("intake"),
            256,
            10,
            grants=keep(
                "tst-intake",
                [
                    tickets.grant("dynamodb:PutItem"),
                    key.grant_read(),
                    work.grant_send(),
                    inbox.grant("s3:GetObject", prefixes=("mail/", "upload/")),
                ],
            ),
            environment={
                "TICKETS_TABLE": tickets.physical_name,
                "WORK_QUEUE_URL": work.url,
                "KEY_SECRET": key.physical_name,
            },
            url=FunctionUrl("NONE", public_reason="shared secret header checked in-function"),
            bucket_trigger=BucketTrigger(inbox, ("mail/", "upload/")),
            on_failure=failures,
            logs=NOTHING,
            failed_events=NOTHING,
        ),
        opts,
    )
    worker = ScopedLambda(
        "tst-worker",
        ScopedLambdaArgs(
            d,
            "tst-worker",
            "triages tickets with the model",
            code("worker"),
            512,
            30,
            grants=keep(
                "tst-worker",
                [
                    tickets.grant("dynamodb:UpdateItem"),
                    model_grant(d, MODEL, sid="TriageModel"),
                    Grant("PutTriaged", ("events:PutEvents",), (d.arns.event_bus(),)),
                ],
            ),
            environment={"TICKETS_TABLE": tickets.physical_name, "MODEL_ID": MODEL.active},
            queue_triggers=(
                QueueTrigger(work, batch_size=5, filter_patterns=({"body": {"kind": ["triage"]}},)),
            ),
            logs=NOTHING,
            failed_events=NOTHING,
        ),
        opts,
    )
    ScopedLambda(
        "tst-notify",
        ScopedLambdaArgs(
            d,
            "tst-notify",
            "tells the customer",
            code("notify"),
            128,
            10,
            grants=keep(
                "tst-notify",
                [
                    d.grant_send_email("SendMail", "bot@example.com"),
                    Grant(
                        "SendSms",
                        ("sms-voice:SendTextMessage",),
                        (d.arns.sms_resource("pool/pool-abc"),),
                    ),
                ],
            ),
            environment={"SENDER": "bot@example.com", "SMS_POOL": "pool-abc"},
            event_rules=(
                EventRuleTrigger(
                    "tst-triaged",
                    {
                        "source": ["crm.tst"],
                        "detail-type": ["tst.triaged"],
                        "detail": {"urgency": [{"anything-but": "low"}]},
                    },
                    dead_letter=failures,
                ),
            ),
            logs=NOTHING,
            failed_events=NOTHING,
        ),
        opts,
    )
    ScopedLambda(
        "tst-audit",
        ScopedLambdaArgs(
            d,
            "tst-audit",
            "keeps a copy of each new ticket",
            code("audit"),
            128,
            10,
            grants=keep("tst-audit", [inbox.grant("s3:PutObject", prefixes=("audit/",))]),
            environment={"INBOX_BUCKET": inbox.physical_name},
            stream_triggers=(
                StreamTrigger(
                    tickets,
                    on_failure=failures,
                    max_retries=1,
                    filter_patterns=({"eventName": ["INSERT"]},),
                ),
            ),
            logs=NOTHING,
            failed_events=NOTHING,
        ),
        opts,
    )
    schedule_role = d.name("tst-followup-role")
    aws.iam.Role(
        "tst-followup-role",
        name=schedule_role,
        assume_role_policy=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Action": "sts:AssumeRole",
                        "Principal": {"Service": "scheduler.amazonaws.com"},
                    }
                ],
            }
        ),
        opts=opts,
    )
    aws.iam.RolePolicy(
        "tst-followup-policy",
        name=f"{schedule_role}-send",
        role=schedule_role,
        policy=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Sid": "SendWork",
                        "Effect": "Allow",
                        "Action": ["sqs:SendMessage"],
                        "Resource": [work.arn],
                    }
                ],
            }
        ),
        opts=opts,
    )
    sweep = ScopedLambda(
        "tst-sweep",
        ScopedLambdaArgs(
            d,
            "tst-sweep",
            "schedules a follow-up for each open ticket",
            code("sweep"),
            128,
            30,
            grants=keep(
                "tst-sweep",
                [
                    tickets.grant("dynamodb:Query", indexes=("by-state",)),
                    Grant(
                        "FollowUps",
                        ("scheduler:CreateSchedule",),
                        (d.arns.schedules_in_group("default"),),
                    ),
                    Grant("PassFollowUpRole", ("iam:PassRole",), (d.arns.role(schedule_role),)),
                ],
            ),
            environment={
                "TICKETS_TABLE": tickets.physical_name,
                "WORK_QUEUE_ARN": work.arn,
                "FOLLOWUP_ROLE_ARN": d.arns.role(schedule_role),
            },
            url=FunctionUrl("AWS_IAM"),
            invoked_async=True,  # the hourly schedule: its own failure queue
            logs=NOTHING,
            failed_events=NOTHING,
        ),
        opts,
    )
    jobs = schedule_group("tst-schedules", d, "tst", opts)
    ScheduledJob("tst-hourly", ScheduledJobArgs(d, "tst-hourly", "rate(1 hour)", sweep, jobs), opts)
    return {"intake_url": intake.function_url, "worker": worker.physical_name}


def fixture_graph(drop: tuple[str, str] | None = None) -> Graph:
    """The fixture system on the mock engine, in eu-west-2 through an explicit provider."""
    values = stack_config_values("dev")

    def program() -> dict[str, Any]:
        provider = aws.Provider(f"aws-{REGION}", region=REGION)
        d = Deployment(
            prefix="dev",
            environment="dev",
            system="tst",
            region=REGION,
            account_id=ACCOUNT_ID,
            partition="aws",
            provider=provider,
            powertools_layer_arn=f"arn:aws:lambda:{REGION}:017000801446:layer:Powertools:1",
            mail=MailIdentities(Arns("aws", REGION, ACCOUNT_ID), provider, "dev"),
        )
        parent = FixtureSystem(pulumi.ResourceOptions(providers={"aws": provider}))
        return fixture_blocks(d, pulumi.ResourceOptions(parent=parent), drop)

    with without_archives():
        resources, outputs = run_program(program, stack="dev", values=values)
    return Graph("dev", from_pulumi_config(values), resources, outputs)
