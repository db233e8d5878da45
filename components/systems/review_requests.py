"""Review request sender (document 004): ask happy customers for a review, catch the rest.

Five functions, each with its own role scoped to what the document lets it touch:

* ``rrs-webhook`` (the only public surface; the tool's HMAC signature checked first): one
  request per completion (conditional put keyed by the completion id), the job record, the
  opt-out and eligibility gate, the captured signal, and one EventBridge Scheduler one-off
  schedule per request in the system's own schedule group. Private feedback is appended to the
  audit and an escalation enqueued; an opt-out is recorded.
* ``rrs-sender`` (SQS ``rrs-work``, ``send`` messages only): the only Bedrock caller (grade,
  then compose); re-checks opt-out, once-only state and quiet hours; one conditional write
  moves the request to its terminal state with the audit, then one ask goes out.
* ``rrs-escalator`` (SQS ``rrs-escalations``, ``escalate`` messages only): the owner handover
  by SES, de-duplicated through append-only markers in the audit.
* ``rrs-sync`` (schedule): the customer sheet (CSV URL or one S3 object) into rrs-customers.
* ``rrs-sweep`` (schedule, gated to opening hours in code): stragglers re-enqueued or escalated.

Two queues, one consumer each, and no event source filters: Lambda deletes an SQS message
that matches none of its mapping's filters, so two filtered mappings on one queue (DESIGN.md's
single rrs-work) drop each other's messages. A message of the wrong kind is a batch item
failure in the handler instead, so it ends in that queue's DLQ. The per-request schedules
target ``rrs-work`` through a role that may only send there; the webhook may create schedules
only in the group and pass only that role. Decisions the document
leaves open are listed in README.md, "Review request sender (rrs)".
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.config import RrsSettings
from components.deployment import Deployment
from components.grants import Grant, policy_document
from components.guarded_table import GuardedTable, GuardedTableArgs, Index, Key
from components.models import model_grant
from components.scheduled_job import (
    ScheduledJob,
    ScheduledJobArgs,
    schedule_group,
    scheduler_trust_policy,
)
from components.scoped_lambda import (
    FunctionUrl,
    QueueTrigger,
)
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import System, SystemArgs
from components.systems.legacy_factory import FunctionFactory
from components.work_queue import WorkQueue, WorkQueueArgs

PACKAGE = "handlers.review_requests"
REQUESTS_INDEX = "state-due"
"""GSI of rrs-requests: partition ``state``, sort ``due`` (ISO-8601 UTC, sorts as time)."""
REQUESTS_TTL = "expires_at"
"""TTL attribute of rrs-requests: the retention timestamp (epoch seconds)."""

# Memory and timeouts: the document gives none. The webhook answers the tool quickly ("nothing
# slow happens here"); the sender holds two model calls with bounded retries and one send;
# the sync pages a sheet of a few thousand rows.
SIZES: dict[str, tuple[int, int]] = {
    "rrs-webhook": (256, 10),
    "rrs-sender": (512, 90),
    "rrs-escalator": (256, 30),
    "rrs-sync": (512, 120),
    "rrs-sweep": (256, 60),
}
WORK_VISIBILITY_S = 6 * SIZES["rrs-sender"][1]
ESCALATIONS_VISIBILITY_S = 6 * SIZES["rrs-escalator"][1]
"""AWS's guidance for SQS event sources: six times the consumer's timeout."""
SENDER_CONCURRENCY = 5
"""At most five sender invocations at once: a burst of completions cannot flood Bedrock/SMS."""


def sms_identity(value: str) -> tuple[str, str]:
    """``pool/pool-abc`` -> (``pool``, ``pool-abc``); ``sender-id/Biz/GB`` keeps ``Biz/GB``."""
    kind, _, identifier = value.partition("/")
    return kind, identifier


def sheet_object_arn(deployment: Deployment, source: str) -> str | None:
    """The one S3 object ARN of an ``s3://bucket/key`` sheet source; None for a URL or none."""
    if not source.startswith("s3://"):
        return None
    bucket, _, key = source.removeprefix("s3://").partition("/")
    return f"arn:{deployment.partition}:s3:::{bucket}/{key}"


class ReviewRequests(System):
    """The review request sender: five functions, five tables, two queues, per-request schedules."""

    def __init__(
        self,
        resource_name: str,
        args: SystemArgs[RrsSettings],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("ReviewRequests", resource_name, opts)
        d, s = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)

        # Data ------------------------------------------------------------------------------
        jobs = GuardedTable(
            "rrs-jobs",
            GuardedTableArgs(d, "rrs-jobs", Key("customer_id"), Key("job_ts")),
            child,
        )
        requests = GuardedTable(
            "rrs-requests",
            GuardedTableArgs(
                d,
                "rrs-requests",
                Key("request_id"),
                indexes=(Index(REQUESTS_INDEX, Key("state"), Key("due")),),
                ttl_attribute=REQUESTS_TTL,
            ),
            child,
        )
        customers = GuardedTable(
            "rrs-customers", GuardedTableArgs(d, "rrs-customers", Key("customer_id")), child
        )
        optout = GuardedTable(
            "rrs-optout", GuardedTableArgs(d, "rrs-optout", Key("contact")), child
        )
        audit = GuardedTable(
            "rrs-audit",
            GuardedTableArgs(d, "rrs-audit", Key("request_id"), Key("ts")),
            child,
        )
        work = WorkQueue(
            "rrs-work",
            WorkQueueArgs(
                d, "rrs-work", max_receive_count=5, visibility_timeout_s=WORK_VISIBILITY_S
            ),
            child,
        )
        escalations = WorkQueue(
            "rrs-escalations",
            WorkQueueArgs(
                d,
                "rrs-escalations",
                max_receive_count=5,
                visibility_timeout_s=ESCALATIONS_VISIBILITY_S,
            ),
            child,
        )

        # Secrets: one per purpose, so each GetSecretValue grant names one secret -----------
        webhook_secret = SecretSlot(
            "rrs-webhook-secret",
            SecretSlotArgs(
                d,
                "rrs-webhook-secret",
                "Signing secret the job tool HMACs its webhooks with, plain string",
            ),
            child,
        )
        messaging_key = SecretSlot(
            "rrs-messaging-key",
            SecretSlotArgs(
                d,
                "rrs-messaging-key",
                "Key of the customer-facing links (the feedback link's ref token), keyring "
                'JSON {"active_kid": "k1", "keys": {"k1": "<32+ chars>"}}',
            ),
            child,
        )

        # Per-request schedules: their own group, and a role that may only send to rrs-work -
        # (and to their dead-letter queue: Scheduler sends undeliverable asks there with the
        # same execution role; components/scheduled_job.py names the page).
        requests_group = schedule_group("rrs-requests-schedules", d, "rrs-requests", child)
        group_name = requests_group.name
        schedules_dlq = WorkQueue(
            "rrs-request-schedules-dlq",
            WorkQueueArgs(
                d,
                "rrs-request-schedules-dlq",
                dead_letter=True,
                dead_letter_of=f"schedules of group {group_name} (rrs-webhook)",
            ),
            child,
        )
        schedule_role_name = d.name("rrs-request-schedules-role")
        schedule_role_arn = d.arns.role(schedule_role_name)
        schedule_role = aws.iam.Role(
            "rrs-request-schedules-role",
            name=schedule_role_name,
            description=f"Lets the schedules of group {group_name} send to {work.physical_name} only",
            assume_role_policy=scheduler_trust_policy(d, requests_group),
            tags=d.resource_tags(**{"crm:schedule-group": "rrs-requests"}),
            opts=child,
        )
        aws.iam.RolePolicy(
            "rrs-request-schedules-policy",
            name=f"{schedule_role_name}-send",
            role=schedule_role_name,
            policy=policy_document(
                (
                    work.grant_send(sid="SendToRrsWorkOnly"),
                    schedules_dlq.grant_send(sid="SendUndeliveredToDlq"),
                ),
                owner=schedule_role_name,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[schedule_role]),
        )

        sender_identity = d.sender_identity_arn(s.sender_email)
        # Mail from the configured sender only, though the identity is the whole domain.
        from_sender = {"StringEquals": {"ses:FromAddress": s.sender_email}}
        kind, identifier = sms_identity(s.sms_origination_identity)
        sms_arn = d.arns.sms_resource(kind, identifier)
        hours = s.opening_hours
        common_env = {
            "RRS_REQUESTS_TABLE": requests.physical_name,
            "RRS_REQUESTS_INDEX": REQUESTS_INDEX,
            "RRS_JOBS_TABLE": jobs.physical_name,
            "RRS_CUSTOMERS_TABLE": customers.physical_name,
            "RRS_OPTOUT_TABLE": optout.physical_name,
            "RRS_AUDIT_TABLE": audit.physical_name,
            "RRS_WORK_QUEUE_URL": work.url,
            "RRS_ESCALATIONS_QUEUE_URL": escalations.url,
            "RRS_OPENING_START": hours.start,
            "RRS_OPENING_END": hours.end,
            "RRS_OPENING_TIMEZONE": hours.timezone,
            "RRS_PHONE_REGION": s.phone_region,
            "RRS_MESSAGING_KEY_SECRET_ID": messaging_key.physical_name,
            "RRS_SENDER_EMAIL": s.sender_email,
        }

        function = FunctionFactory(d, PACKAGE, SIZES, common_env, child)

        # Functions -------------------------------------------------------------------------
        webhook_fn = function(
            "rrs-webhook",
            "Job tool webhook: verify, one request per completion, schedule the ask; "
            "record private feedback and opt-outs",
            "webhook",
            (
                webhook_secret.grant_read(),
                messaging_key.grant_read(),
                customers.grant("dynamodb:GetItem", sid="ReadCustomer"),
                optout.grant("dynamodb:GetItem", sid="CheckOptOut"),
                optout.grant("dynamodb:PutItem", sid="RecordOptOut"),
                requests.grant("dynamodb:PutItem", sid="OneRequestPerCompletion"),
                requests.grant("dynamodb:GetItem", sid="ReadRequestForFeedback"),
                jobs.grant("dynamodb:PutItem", sid="RecordJob"),
                audit.grant("dynamodb:PutItem", sid="AppendAudit"),
                escalations.grant_send(sid="EnqueueEscalation"),
                Grant(
                    "CreateRequestSchedules",
                    ("scheduler:CreateSchedule",),
                    (d.arns.schedules_in_group(group_name),),
                ),
                Grant(
                    "PassRequestScheduleRole",
                    ("iam:PassRole",),
                    (schedule_role_arn,),
                    {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}},
                ),
            ),
            {
                "RRS_WEBHOOK_SECRET_ID": webhook_secret.physical_name,
                "RRS_SCHEDULE_GROUP": group_name,
                "RRS_SCHEDULE_ROLE_ARN": schedule_role_arn,
                "RRS_WORK_QUEUE_ARN": work.arn,
                "RRS_SCHEDULE_DLQ_ARN": schedules_dlq.arn,
                "RRS_REQUEST_DELAY_HOURS": str(s.request_delay_hours),
                "RRS_RETENTION_DAYS": str(s.retention_days),
            },
            uses=(
                "RRS_REQUESTS_TABLE",
                "RRS_JOBS_TABLE",
                "RRS_CUSTOMERS_TABLE",
                "RRS_OPTOUT_TABLE",
                "RRS_AUDIT_TABLE",
                "RRS_ESCALATIONS_QUEUE_URL",
                "RRS_OPENING_START",
                "RRS_OPENING_END",
                "RRS_OPENING_TIMEZONE",
                "RRS_PHONE_REGION",
                "RRS_MESSAGING_KEY_SECRET_ID",
            ),
            url=FunctionUrl(
                "NONE",
                public_reason="The job tool's HMAC-SHA256 signature (rrs-webhook-secret, "
                "timestamped, replay window) checked before the body is read",
            ),
            vendored=("email-validator", "idna", "phonenumberslite", "tzdata"),
        )
        sender_fn = function(
            "rrs-sender",
            "Due asks: re-check opt-out, state and quiet hours; grade, compose, validate; "
            "one conditional terminal write, one ask",
            "sender",
            (
                model_grant(d, s.grade_model, sid="InvokeGradeModel"),
                model_grant(d, s.compose_model, sid="InvokeComposeModel"),
                requests.grant("dynamodb:GetItem", "dynamodb:UpdateItem", sid="GuardRequestState"),
                optout.grant("dynamodb:GetItem", sid="RecheckOptOut"),
                audit.grant("dynamodb:PutItem", sid="AppendAudit"),
                messaging_key.grant_read(),
                escalations.grant_send(sid="EnqueueEscalation"),
                Grant("SendAskEmail", ("ses:SendEmail",), (sender_identity,), from_sender),
                Grant("SendAskSms", ("sms-voice:SendTextMessage",), (sms_arn,)),
            ),
            {
                "RRS_GRADE_MODEL_ID": s.grade_model.active,
                "RRS_COMPOSE_MODEL_ID": s.compose_model.active,
                "RRS_SMS_ORIGINATION_IDENTITY": sms_arn,
                "RRS_REVIEW_URL": s.review_url,
                "RRS_FEEDBACK_URL": s.feedback_url,
                "RRS_BUSINESS_NAME": s.business_name,
                "RRS_LINK_TTL_DAYS": str(s.link_ttl_days),
            },
            uses=(
                "RRS_REQUESTS_TABLE",
                "RRS_OPTOUT_TABLE",
                "RRS_AUDIT_TABLE",
                "RRS_ESCALATIONS_QUEUE_URL",
                "RRS_OPENING_START",
                "RRS_OPENING_END",
                "RRS_OPENING_TIMEZONE",
                "RRS_MESSAGING_KEY_SECRET_ID",
                "RRS_SENDER_EMAIL",
            ),
            queues=(QueueTrigger(work, batch_size=5, maximum_concurrency=SENDER_CONCURRENCY),),
            vendored=("tzdata",),
        )
        escalator_fn = function(
            "rrs-escalator",
            "Escalations: build the handover, de-duplicate, email the owner",
            "escalator",
            (
                requests.grant("dynamodb:GetItem", sid="ReadRequest"),
                customers.grant("dynamodb:GetItem", sid="ReadCustomer"),
                jobs.grant("dynamodb:GetItem", sid="ReadJob"),
                audit.grant("dynamodb:Query", sid="ReadAuditTrail"),
                audit.grant("dynamodb:PutItem", sid="AppendEscalationMarker"),
                Grant("SendOwnerHandover", ("ses:SendEmail",), (sender_identity,), from_sender),
            ),
            {
                "RRS_OWNER_EMAIL": s.owner_email,
                "RRS_BUSINESS_NAME": s.business_name,
                "RRS_CLAIM_LEASE_SECONDS": str(SIZES["rrs-escalator"][1] * 2),
            },
            uses=(
                "RRS_REQUESTS_TABLE",
                "RRS_CUSTOMERS_TABLE",
                "RRS_JOBS_TABLE",
                "RRS_AUDIT_TABLE",
                "RRS_SENDER_EMAIL",
            ),
            queues=(QueueTrigger(escalations, batch_size=5),),
            vendored=("tzdata",),
        )
        sheet_arn = sheet_object_arn(d, s.sheet_source)
        sync_grants: tuple[Grant, ...] = (
            customers.grant("dynamodb:UpdateItem", sid="UpsertCustomers"),
        )
        if sheet_arn is not None:
            sync_grants += (Grant("ReadCustomerSheet", ("s3:GetObject",), (sheet_arn,)),)
        sync_fn = function(
            "rrs-sync",
            "Customer sheet (CSV URL or S3 object) into rrs-customers, with prior sentiment",
            "sync",
            sync_grants,
            {"RRS_SHEET_SOURCE": s.sheet_source},
            uses=("RRS_CUSTOMERS_TABLE", "RRS_PHONE_REGION"),
            vendored=("email-validator", "idna", "phonenumberslite", "tzdata"),
            invoked_async=True,
        )
        sweep_fn = function(
            "rrs-sweep",
            "Stragglers past due and not terminal: re-enqueue or escalate (opening hours only)",
            "sweep",
            (
                Grant(
                    "QueryStragglers",
                    ("dynamodb:Query",),
                    (requests.index_arn(REQUESTS_INDEX),),
                ),
                requests.grant("dynamodb:UpdateItem", sid="MarkSwept"),
                work.grant_send(sid="Requeue"),
                escalations.grant_send(sid="EscalateStraggler"),
            ),
            {
                "RRS_SWEEP_GRACE_MINUTES": str(s.sweep_grace_minutes),
                "RRS_SWEEP_MAX_ATTEMPTS": str(s.sweep_max_attempts),
            },
            uses=(
                "RRS_REQUESTS_TABLE",
                "RRS_REQUESTS_INDEX",
                "RRS_WORK_QUEUE_URL",
                "RRS_ESCALATIONS_QUEUE_URL",
                "RRS_OPENING_START",
                "RRS_OPENING_END",
                "RRS_OPENING_TIMEZONE",
            ),
            vendored=("tzdata",),
            invoked_async=True,
        )

        # Recurring schedules ---------------------------------------------------------------
        jobs_group = schedule_group("rrs-schedules", d, d.system, child)
        for name, expression, target, what in (
            ("rrs-sweep", s.sweep_schedule, sweep_fn, "re-drive or escalate stragglers"),
            ("rrs-sync", s.sync_schedule, sync_fn, "mirror the customer sheet"),
        ):
            ScheduledJob(
                f"{name}-schedule",
                ScheduledJobArgs(d, name, expression, target, jobs_group, description=what),
                child,
            )

        self.finish(
            {
                "webhook_url": webhook_fn.function_url,
                "work_queue_url": work.url,
                "escalations_queue_url": escalations.url,
                "schedule_group": requests_group.name,
                "tables": {
                    "jobs": jobs.physical_name,
                    "requests": requests.physical_name,
                    "customers": customers.physical_name,
                    "optout": optout.physical_name,
                    "audit": audit.physical_name,
                },
                "secrets": {
                    "webhook_signing_secret": webhook_secret.physical_name,
                    "messaging_key": messaging_key.physical_name,
                },
                "functions": {
                    "sender": sender_fn.physical_name,
                    "escalator": escalator_fn.physical_name,
                    "sync": sync_fn.physical_name,
                    "sweep": sweep_fn.physical_name,
                },
            }
        )
