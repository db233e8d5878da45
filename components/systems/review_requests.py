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
that matches none of its mapping's filters, so two filtered mappings on one queue (one
rrs-work for both kinds) drop each other's messages. A message of the wrong kind is a batch item
failure in the handler instead, so it ends in that queue's DLQ. The per-request schedules
target ``rrs-work`` through a role that may only send there; the webhook may create schedules
only in the group and pass only that role. Decisions the document
leaves open are listed in README.md, "Review request sender (rrs)".
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from components.config import RrsSettings
from components.deployment import Deployment
from components.grants import Grant, policy_document
from components.guarded_table import GuardedTable, GuardedTableArgs
from components.models import model_grant
from components.scheduled_job import Schedule, schedule_group, scheduler_trust_policy
from components.scoped_lambda import FunctionUrl, QueueTrigger
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import System, SystemArgs
from components.systems.function_factory import FunctionFactory
from components.work_queue import WorkQueue, WorkQueueArgs, consumer_visibility
from handlers.review_requests import contract

PACKAGE = "handlers.review_requests"

# Memory and timeouts: the document gives none. The webhook answers the tool quickly ("nothing
# slow happens here"); the sender holds two model calls with bounded retries and one send;
# the sync pages a sheet of a few thousand rows.
SIZES: dict[str, tuple[int, int]] = {
    contract.WEBHOOK: (256, 10),
    contract.SENDER: (512, 90),
    contract.ESCALATOR: (256, 30),
    contract.SYNC: (512, 120),
    contract.SWEEP: (256, 60),
}
SENDER_CONCURRENCY = 5
"""At most five sender invocations at once: a burst of completions cannot flood Bedrock/SMS."""



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

        # Data: the tables as the contract declares them ------------------------------------
        jobs, requests, customers, optout, audit = (
            GuardedTable(spec.name, GuardedTableArgs.of(d, spec), child)
            for spec in (
                contract.JOBS,
                contract.REQUESTS,
                contract.CUSTOMERS,
                contract.OPTOUT,
                contract.AUDIT,
            )
        )
        function = FunctionFactory(d, PACKAGE, SIZES, child)
        work = WorkQueue(
            contract.WORK_QUEUE,
            WorkQueueArgs(
                d,
                contract.WORK_QUEUE,
                max_receive_count=5,
                visibility_timeout_s=consumer_visibility(function.timeout(contract.SENDER)),
            ),
            child,
        )
        escalations = WorkQueue(
            contract.ESCALATIONS_QUEUE,
            WorkQueueArgs(
                d,
                contract.ESCALATIONS_QUEUE,
                max_receive_count=5,
                visibility_timeout_s=consumer_visibility(function.timeout(contract.ESCALATOR)),
            ),
            child,
        )

        # Secrets: one per purpose, so each GetSecretValue grant names one secret -----------
        webhook_secret = SecretSlot(
            contract.WEBHOOK_SECRET,
            SecretSlotArgs(
                d,
                contract.WEBHOOK_SECRET,
                "Signing secret the job tool HMACs its webhooks with, plain string",
            ),
            child,
        )
        messaging_key = SecretSlot(
            contract.MESSAGING_KEY,
            SecretSlotArgs(
                d,
                contract.MESSAGING_KEY,
                "Key of the customer-facing links (the feedback link's ref token), keyring "
                'JSON {"active_kid": "k1", "keys": {"k1": "<32+ chars>"}}',
            ),
            child,
        )

        # Per-request schedules: their own group, and a role that may only send to rrs-work -
        # (and to their dead-letter queue: Scheduler sends undeliverable asks there with the
        # same execution role; components/scheduled_job.py names the page).
        requests_group = schedule_group(
            "rrs-requests-schedules", d, contract.REQUEST_SCHEDULE_GROUP, child
        )
        group_name = requests_group.name
        schedules_dlq = WorkQueue(
            contract.REQUEST_SCHEDULES_DLQ,
            WorkQueueArgs(
                d,
                contract.REQUEST_SCHEDULES_DLQ,
                dead_letter=True,
                dead_letter_of=f"schedules of group {group_name} made by rrs-webhook",
            ),
            child,
        )
        schedule_role_name = d.name(contract.REQUEST_SCHEDULES_ROLE)
        schedule_role_arn = d.arns.role(schedule_role_name)
        schedule_role = aws.iam.Role(
            contract.REQUEST_SCHEDULES_ROLE,
            name=schedule_role_name,
            description=f"Lets the schedules of group {group_name} send to {work.physical_name} only",
            assume_role_policy=scheduler_trust_policy(d, requests_group),
            tags=d.resource_tags(**{"crm:schedule-group": contract.REQUEST_SCHEDULE_GROUP}),
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

        sms_arn = d.arns.sms_resource(s.sms_origination_identity)
        hours = s.opening_hours
        # Every settings field of every function, once; each record picks its own
        # (handlers/review_requests/contract.py), so infra and handlers cannot drift.
        values: dict[str, Any] = {
            "requests_table": requests.physical_name,
            "requests_index": contract.REQUESTS_INDEX,
            "jobs_table": jobs.physical_name,
            "customers_table": customers.physical_name,
            "optout_table": optout.physical_name,
            "audit_table": audit.physical_name,
            "work_queue_url": work.url,
            "work_queue_arn": work.arn,
            "escalations_queue_url": escalations.url,
            "opening_start": hours.start,
            "opening_end": hours.end,
            "opening_timezone": hours.timezone,
            "phone_region": s.phone_region,
            "messaging_key_secret_id": messaging_key.physical_name,
            "webhook_secret_id": webhook_secret.physical_name,
            "sender_email": s.sender_email,
            "owner_email": s.owner_email,
            "business_name": s.business_name,
            "schedule_group": group_name,
            "schedule_role_arn": schedule_role_arn,
            "schedule_dlq_arn": schedules_dlq.arn,
            "request_delay_hours": s.request_delay_hours,
            "retention_days": s.retention_days,
            "grade_model_id": s.grade_model.active,
            "compose_model_id": s.compose_model.active,
            "sms_origination_identity": sms_arn,
            "review_url": s.review_url,
            "feedback_url": s.feedback_url,
            "link_ttl_days": s.link_ttl_days,
            "claim_lease_seconds": function.timeout(contract.ESCALATOR) * 2,
            # Kept as "" when no sheet is configured; the handler reads that as None.
            "sheet_source": s.sheet_source,
            "sweep_grace_minutes": s.sweep_grace_minutes,
            "sweep_max_attempts": s.sweep_max_attempts,
        }

        # Functions -------------------------------------------------------------------------
        webhook_fn = function(
            contract.WEBHOOK,
            "Job tool webhook: verify, one request per completion, schedule the ask; "
            "record private feedback and opt-outs",
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
            contract.WebhookSettings.environment(values),
            url=FunctionUrl(
                "NONE",
                public_reason="The job tool's HMAC-SHA256 signature (rrs-webhook-secret, "
                "timestamped, replay window) checked before the body is read",
            ),
            vendored=("email-validator", "idna", "phonenumberslite", "tzdata"),
        )
        sender_fn = function(
            contract.SENDER,
            "Due asks: re-check opt-out, state and quiet hours; grade, compose, validate; "
            "one conditional terminal write, one ask",
            (
                model_grant(d, s.grade_model, sid="InvokeGradeModel"),
                model_grant(d, s.compose_model, sid="InvokeComposeModel"),
                requests.grant("dynamodb:GetItem", "dynamodb:UpdateItem", sid="GuardRequestState"),
                # ConditionCheckItem: the claim's transaction checks each contact's opt-out.
                optout.grant(
                    "dynamodb:GetItem", "dynamodb:ConditionCheckItem", sid="RecheckOptOut"
                ),
                audit.grant("dynamodb:PutItem", sid="AppendAudit"),
                messaging_key.grant_read(),
                escalations.grant_send(sid="EnqueueEscalation"),
                d.grant_send_email("SendAskEmail", s.sender_email),
                Grant("SendAskSms", ("sms-voice:SendTextMessage",), (sms_arn,)),
            ),
            contract.SenderSettings.environment(values),
            queues=(QueueTrigger(work, batch_size=5, maximum_concurrency=SENDER_CONCURRENCY),),
            vendored=("tzdata",),
        )
        escalator_fn = function(
            contract.ESCALATOR,
            "Escalations: build the handover, de-duplicate, email the owner",
            (
                requests.grant("dynamodb:GetItem", sid="ReadRequest"),
                customers.grant("dynamodb:GetItem", sid="ReadCustomer"),
                jobs.grant("dynamodb:GetItem", sid="ReadJob"),
                audit.grant("dynamodb:Query", sid="ReadAuditTrail"),
                audit.grant("dynamodb:PutItem", sid="AppendEscalationMarker"),
                d.grant_send_email("SendOwnerHandover", s.sender_email),
            ),
            contract.EscalatorSettings.environment(values),
            queues=(QueueTrigger(escalations, batch_size=5),),
            vendored=("tzdata",),
        )
        sheet_arn = sheet_object_arn(d, s.sheet_source)
        sync_grants: tuple[Grant, ...] = (
            customers.grant("dynamodb:UpdateItem", sid="UpsertCustomers"),
            # The stored row hashes, read before writing: only changed rows are written.
            customers.grant("dynamodb:Scan", sid="ReadCustomerHashes"),
        )
        if sheet_arn is not None:
            sync_grants += (Grant("ReadCustomerSheet", ("s3:GetObject",), (sheet_arn,)),)
        sync_fn = function(
            contract.SYNC,
            "Customer sheet (CSV URL or S3 object) into rrs-customers, with prior sentiment",
            sync_grants,
            contract.SyncSettings.environment(values),
            vendored=("email-validator", "idna", "phonenumberslite", "tzdata"),
            schedules=(Schedule(contract.SYNC, s.sync_schedule, "mirror the customer sheet"),),
        )
        sweep_fn = function(
            contract.SWEEP,
            "Stragglers past due and not terminal: re-enqueue or escalate (opening hours only)",
            (
                Grant(
                    "QueryStragglers",
                    ("dynamodb:Query",),
                    (requests.index_arn(contract.REQUESTS_INDEX),),
                ),
                requests.grant("dynamodb:UpdateItem", sid="MarkSwept"),
                work.grant_send(sid="Requeue"),
                escalations.grant_send(sid="EscalateStraggler"),
            ),
            contract.SweepSettings.environment(values),
            vendored=("tzdata",),
            schedules=(
                Schedule(contract.SWEEP, s.sweep_schedule, "re-drive or escalate stragglers"),
            ),
        )

        # The sweep reports a claimed message never confirmed sent; a person must look.
        d.watch_unconfirmed_sends("UnconfirmedAsks", "review asks claimed and never confirmed sent", self)
        # Its sender and escalator fall back to templates when Bedrock refuses the model.
        d.watch_degradations(self)

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
