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
* ``rrs-sweep`` (schedule, gated to opening hours in code): stragglers re-enqueued or escalated,
  and once a day, while rrs-sender's refused-model notes keep coming, the owner's notice of it
  (an ``escalate`` message the escalator mails).

Two queues, one consumer each, and no event source filters: Lambda deletes an SQS message
that matches none of its mapping's filters, so two filtered mappings on one queue (one
rrs-work for both kinds) drop each other's messages. A message of the wrong kind is a batch item
failure in the handler instead, so it ends in that queue's DLQ. The per-request schedules
target ``rrs-work`` through a role that may only send there; the webhook may create schedules
only in the group and pass only that role. Decisions the document
leaves open are listed in handlers/review_requests/README.md.
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
from components.personal_data import (
    SCHEDULE_EVENTS,
    Holding,
    PersonalData,
    Retention,
    Suppression,
    function_logs,
    messages,
)
from components.scheduled_job import (
    Schedule,
    ScheduleGroupRef,
    schedule_group,
    scheduler_trust_policy,
)
from components.scoped_lambda import FunctionUrl, QueueTrigger, ScopedLambda
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import Build, System, SystemArgs, settings_values
from components.systems.function_factory import FunctionFactory
from components.work_queue import WorkQueue, WorkQueueArgs, consumer_visibility
from handlers.common.tables import TableSpec
from handlers.review_requests import contract

PACKAGE = "handlers.review_requests"

# Memory and timeouts: the document gives none. The webhook answers the tool quickly ("nothing
# slow happens here"); the sender holds two model calls with bounded retries and one send;
# the sync pages a sheet of a few thousand rows.
SIZES: dict[str, tuple[int, int]] = {
    # A public surface answers a caller who waits (Shopify drops a webhook after 5 s): 512 MB,
    # chosen by `make bench-init`: a first invocation costs 240-470 ms of CPU (more as this
    # machine's load grows), which with its AWS waits predicts 1.0-1.8 s here against the
    # 1.5 s target; at 256 MB (a seventh of a vCPU) it would be 2-3.5 s.
    # rrs-webhook's job.completed does the most (two secrets, five reads, three writes and a
    # schedule created): about 460 ms of CPU, 1.7-1.9 s predicted at 512 MB; at 1,024 MB about
    # 1.05 s. The bill does not move (`make cost STACK=prod`: no line changes by a cent).
    contract.WEBHOOK: (1024, 10),
    contract.SENDER: (512, 90),
    contract.ESCALATOR: (256, 30),
    contract.SYNC: (512, 120),
    contract.SWEEP: (256, 60),
}
SENDER_CONCURRENCY = 5
"""At most five sender invocations at once: a burst of completions cannot flood Bedrock/SMS."""
ESCALATOR_CONCURRENCY = 2
"""The fewest SQS allows: handovers are a few a week, and each is one owner mail (SES)."""



def sheet_object_arn(deployment: Deployment, source: str) -> str | None:
    """The one S3 object ARN of an ``s3://bucket/key`` sheet source; None for a URL or none."""
    if not source.startswith("s3://"):
        return None
    bucket, _, key = source.removeprefix("s3://").partition("/")
    return f"arn:{deployment.partition}:s3:::{bucket}/{key}"


class ReviewRequests(System):
    """The review request sender: five functions, five tables, two queues, per-request schedules."""

    jobs: GuardedTable
    requests: GuardedTable
    customers: GuardedTable
    optout: GuardedTable
    audit: GuardedTable
    work: WorkQueue
    escalations: WorkQueue
    webhook_secret: SecretSlot
    messaging_key: SecretSlot
    requests_group: ScheduleGroupRef
    schedules_dlq: WorkQueue
    schedule_role_arn: str
    sms_arn: str
    webhook_fn: ScopedLambda
    sender_fn: ScopedLambda
    escalator_fn: ScopedLambda
    sync_fn: ScopedLambda
    sweep_fn: ScopedLambda

    def __init__(
        self,
        resource_name: str,
        args: SystemArgs[RrsSettings],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("ReviewRequests", resource_name, opts)
        d, s = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)
        self._data(d, s, child)
        function = FunctionFactory(
            d,
            PACKAGE,
            SIZES,
            child,
            logs=function_logs("request ids", "customer ids"),
            failed_events=SCHEDULE_EVENTS,
        )
        self._queues(d, function, child)
        self._secrets(d, child)
        self._request_schedules(d, child)
        self.sms_arn = d.arns.sms_resource(s.sms_origination_identity)
        values = self._environment(s, function)
        values["alert_email"] = d.alert_email
        b = Build(d, s, function, values)
        self._webhook(b)
        self._sender(b)
        self._escalator(b)
        self._sync(b)
        self._sweep(b)
        # The sweep reports a claimed message never confirmed sent; a person must look.
        d.watch_unconfirmed_sends("UnconfirmedAsks", "review asks claimed and never confirmed sent", self)
        # Its sender falls back to the rules when Bedrock refuses a model: counted (alarmed
        # here), noted in rrs-requests, and named in the owner's daily notice (sweep, escalator).
        d.watch_degradations(self)
        d.watch_spend_caps(self)
        self._outputs()

    def _data(self, d: Deployment, s: RrsSettings, child: pulumi.ResourceOptions) -> None:
        """The five tables as the contract declares them."""
        asks = Retention.setting(
            "rrs", s, "retention_days", "a year of asks answers \"did we ask this customer\""
        )
        held: dict[TableSpec, Holding] = {
            contract.JOBS: PersonalData(
                ("customer ids", "the job tool's job details", "completion times"),
                "the job an ask is about, and the owner's handover",
                asks,
            ),
            contract.REQUESTS: PersonalData(
                ("customer ids", "email address or phone number", "first names", "the graded signal"),
                "the ask to send, its state and its private feedback link",
                asks,
            ),
            contract.CUSTOMERS: PersonalData(
                ("customer ids", "names", "email addresses", "phone numbers", "time zones"),
                "who to ask and on which channel (the customer sheet's mirror)",
                Retention.setting(
                    "rrs", s, "customer_days", "refreshed by each sync of the sheet and each job"
                ),
            ),
            contract.OPTOUT: Suppression(
                ("email addresses or phone numbers that opted out",),
                "an opted-out contact is never asked again",
            ),
            contract.AUDIT: PersonalData(
                ("request ids", "what was sent, when and on which channel", "delivery outcomes"),
                "what was sent to whom, for the owner's questions and complaints",
                asks,
            ),
        }
        self.jobs, self.requests, self.customers, self.optout, self.audit = (
            GuardedTable(spec.name, GuardedTableArgs.of(d, spec, held[spec]), child)
            for spec in (
                contract.JOBS,
                contract.REQUESTS,
                contract.CUSTOMERS,
                contract.OPTOUT,
                contract.AUDIT,
            )
        )

    def _queues(
        self, d: Deployment, function: FunctionFactory, child: pulumi.ResourceOptions
    ) -> None:
        """rrs-work (asks, from the schedules) and rrs-escalations, one consumer each."""
        self.work = WorkQueue(
            contract.WORK_QUEUE,
            WorkQueueArgs(
                d,
                contract.WORK_QUEUE,
                max_receive_count=5,
                visibility_timeout_s=consumer_visibility(function.timeout(contract.SENDER)),
                personal_data=messages("request ids", why="an ask due now, for rrs-sender"),
            ),
            child,
        )
        self.escalations = WorkQueue(
            contract.ESCALATIONS_QUEUE,
            WorkQueueArgs(
                d,
                contract.ESCALATIONS_QUEUE,
                max_receive_count=5,
                visibility_timeout_s=consumer_visibility(function.timeout(contract.ESCALATOR)),
                personal_data=messages("request ids", why="a handover to the owner, for rrs-escalator"),
            ),
            child,
        )

    def _secrets(self, d: Deployment, child: pulumi.ResourceOptions) -> None:
        """One secret per purpose, so each GetSecretValue grant names one secret."""
        self.webhook_secret = SecretSlot(
            contract.WEBHOOK_SECRET,
            SecretSlotArgs(
                d,
                contract.WEBHOOK_SECRET,
                "Signing secret the job tool HMACs its webhooks with, plain string",
            ),
            child,
        )
        self.forget_salt = SecretSlot(
            contract.FORGET_SALT,
            SecretSlotArgs(
                d,
                contract.FORGET_SALT,
                "Salt of the hashes make forget leaves on rrs-optout for a person erased here: "
                "64 random characters, generated by make secrets; a new salt forgets the old hashes",
            ),
            child,
        )
        self.messaging_key = SecretSlot(
            contract.MESSAGING_KEY,
            SecretSlotArgs(
                d,
                contract.MESSAGING_KEY,
                "Key of the customer-facing links (the feedback link's ref token), keyring "
                'JSON {"active_kid": "k1", "keys": {"k1": "<32+ chars>"}}',
            ),
            child,
        )

    def _request_schedules(self, d: Deployment, child: pulumi.ResourceOptions) -> None:
        """Per-request schedules: their own group, and a role that may only send to rrs-work
        (and to their dead-letter queue: Scheduler sends undeliverable asks there with the
        same execution role; components/scheduled_job.py names the page)."""
        self.requests_group = schedule_group(
            "rrs-requests-schedules", d, contract.REQUEST_SCHEDULE_GROUP, child
        )
        group_name = self.requests_group.name
        self.schedules_dlq = WorkQueue(
            contract.REQUEST_SCHEDULES_DLQ,
            WorkQueueArgs(
                d,
                contract.REQUEST_SCHEDULES_DLQ,
                dead_letter=True,
                dead_letter_of=f"schedules of group {group_name} made by rrs-webhook",
                personal_data=messages("request ids", why="an ask Scheduler could not deliver"),
            ),
            child,
        )
        schedule_role_name = d.name(contract.REQUEST_SCHEDULES_ROLE)
        self.schedule_role_arn = d.arns.role(schedule_role_name)
        schedule_role = aws.iam.Role(
            contract.REQUEST_SCHEDULES_ROLE,
            name=schedule_role_name,
            description=f"Lets the schedules of group {group_name} send to {self.work.physical_name} only",
            permissions_boundary=d.permissions_boundary,
            assume_role_policy=scheduler_trust_policy(d, self.requests_group),
            tags=d.resource_tags(**{"crm:schedule-group": contract.REQUEST_SCHEDULE_GROUP}),
            opts=child,
        )
        aws.iam.RolePolicy(
            "rrs-request-schedules-policy",
            name=f"{schedule_role_name}-send",
            role=schedule_role_name,
            policy=policy_document(
                (
                    self.work.grant_send(sid="SendToRrsWorkOnly"),
                    self.schedules_dlq.grant_send(sid="SendUndeliveredToDlq"),
                ),
                owner=schedule_role_name,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[schedule_role]),
        )

    def _environment(self, s: RrsSettings, function: FunctionFactory) -> dict[str, Any]:
        """Every settings field of every function, once; each record picks its own
        (handlers/review_requests/contract.py), so infra and handlers cannot drift."""
        hours = s.opening_hours
        return {
            **settings_values(s),
            "requests_table": self.requests.physical_name,
            "requests_index": contract.REQUESTS_INDEX,
            "jobs_table": self.jobs.physical_name,
            "customers_table": self.customers.physical_name,
            "optout_table": self.optout.physical_name,
            "audit_table": self.audit.physical_name,
            "work_queue_url": self.work.url,
            "work_queue_arn": self.work.arn,
            "escalations_queue_url": self.escalations.url,
            "opening_start": hours.start,
            "opening_end": hours.end,
            "opening_timezone": hours.timezone,
            "messaging_key_secret_id": self.messaging_key.physical_name,
            "webhook_secret_id": self.webhook_secret.physical_name,
            "forget_salt_secret_id": self.forget_salt.physical_name,
            "schedule_group": self.requests_group.name,
            "schedule_role_arn": self.schedule_role_arn,
            "schedule_dlq_arn": self.schedules_dlq.arn,
            "grade_model_id": s.grade_model.active,
            "compose_model_id": s.compose_model.active,
            "sms_origination_identity": self.sms_arn,
            "claim_lease_seconds": function.timeout(contract.ESCALATOR) * 2,
        }  # sheet_source is "" when no sheet is configured; the handler reads that as None

    def _webhook(self, b: Build[RrsSettings]) -> None:
        self.webhook_fn = b.function(
            contract.WEBHOOK,
            "Job tool webhook: verify, one request per completion, schedule the ask; "
            "record private feedback and opt-outs",
            (
                self.webhook_secret.grant_read(),
                self.messaging_key.grant_read(),
                self.forget_salt.grant_read(),  # a forgotten person's opt-out is a salted hash
                self.customers.grant("dynamodb:GetItem", sid="ReadCustomer"),
                self.optout.grant("dynamodb:GetItem", sid="CheckOptOut"),
                self.optout.grant("dynamodb:PutItem", sid="RecordOptOut"),
                self.requests.grant("dynamodb:PutItem", sid="OneRequestPerCompletion"),
                self.requests.grant("dynamodb:GetItem", sid="ReadRequestForFeedback"),
                self.jobs.grant("dynamodb:PutItem", sid="RecordJob"),
                self.audit.grant("dynamodb:PutItem", sid="AppendAudit"),
                self.escalations.grant_send(sid="EnqueueEscalation"),
                Grant(
                    "CreateRequestSchedules",
                    ("scheduler:CreateSchedule",),
                    (b.d.arns.schedules_in_group(self.requests_group.name),),
                ),
                Grant(
                    "PassRequestScheduleRole",
                    ("iam:PassRole",),
                    (self.schedule_role_arn,),
                    {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}},
                ),
            ),
            contract.WebhookSettings.environment(b.values),
            url=FunctionUrl(
                "NONE",
                public_reason="The job tool's HMAC-SHA256 signature (rrs-webhook-secret, "
                "timestamped, replay window) checked before the body is read",
                registered_in="the job tool: its webhook settings",
            ),
            vendored=("email-validator", "idna", "phonenumberslite", "tzdata"),
        )

    def _sender(self, b: Build[RrsSettings]) -> None:
        self.sender_fn = b.function(
            contract.SENDER,
            "Due asks: re-check opt-out, state and quiet hours; grade, compose, validate; "
            "one conditional terminal write, one ask",
            (
                model_grant(b.d, b.s.grade_model, sid="InvokeGradeModel"),
                model_grant(b.d, b.s.compose_model, sid="InvokeComposeModel"),
                self.requests.grant("dynamodb:GetItem", "dynamodb:UpdateItem", sid="GuardRequestState"),
                # ConditionCheckItem: the claim's transaction checks each contact's opt-out.
                self.optout.grant(
                    "dynamodb:GetItem", "dynamodb:ConditionCheckItem", sid="RecheckOptOut"
                ),
                self.audit.grant("dynamodb:PutItem", sid="AppendAudit"),
                self.messaging_key.grant_read(),
                self.escalations.grant_send(sid="EnqueueEscalation"),
                # Also inside GuardRequestState; named so the note keeps its keys if that narrows.
                self.requests.grant_degradation_items(
                    "dynamodb:UpdateItem", self._notes(contract.SENDER), sid="NoteRefusedModel"
                ),
                self.requests.grant_spend("model", sid="CountModelCalls"),
                self.requests.grant_spend("sms", sid="CountSms"),
                b.d.grant_send_email("SendAskEmail", b.s.sender_email),
                Grant("SendAskSms", ("sms-voice:SendTextMessage",), (self.sms_arn,)),
            ),
            contract.SenderSettings.environment(b.values),
            queues=(QueueTrigger(self.work, batch_size=5, maximum_concurrency=SENDER_CONCURRENCY),),
            vendored=("tzdata",),
        )

    def _escalator(self, b: Build[RrsSettings]) -> None:
        self.escalator_fn = b.function(
            contract.ESCALATOR,
            "Escalations: build the handover, de-duplicate, email the owner",
            (
                self.requests.grant("dynamodb:GetItem", sid="ReadRequest"),
                self.customers.grant("dynamodb:GetItem", sid="ReadCustomer"),
                self.jobs.grant("dynamodb:GetItem", sid="ReadJob"),
                self.audit.grant("dynamodb:Query", sid="ReadAuditTrail"),
                self.audit.grant("dynamodb:PutItem", sid="AppendEscalationMarker"),
                # The notes its notice names (also inside ReadRequest; named for the same reason).
                self.requests.grant_degradation_items(
                    "dynamodb:GetItem", contract.DEGRADABLE, sid="ReadDegradationNotes"
                ),
                b.d.grant_send_email("SendOwnerHandover", b.s.sender_email),
            ),
            contract.EscalatorSettings.environment(b.values),
            queues=(QueueTrigger(self.escalations, batch_size=5, maximum_concurrency=ESCALATOR_CONCURRENCY),),
            vendored=("tzdata",),
        )

    def _sync(self, b: Build[RrsSettings]) -> None:
        sheet_arn = sheet_object_arn(b.d, b.s.sheet_source)
        sync_grants: tuple[Grant, ...] = (
            self.customers.grant("dynamodb:UpdateItem", sid="UpsertCustomers"),
            # The stored row hashes, read before writing: only changed rows are written.
            self.customers.grant("dynamodb:Scan", sid="ReadCustomerHashes"),
        )
        if sheet_arn is not None:
            sync_grants += (Grant("ReadCustomerSheet", ("s3:GetObject",), (sheet_arn,)),)
        self.sync_fn = b.function(
            contract.SYNC,
            "Customer sheet (CSV URL or S3 object) into rrs-customers, with prior sentiment",
            sync_grants,
            contract.SyncSettings.environment(b.values),
            vendored=("email-validator", "idna", "phonenumberslite", "tzdata"),
            schedules=(Schedule(contract.SYNC, b.s.sync_schedule, "mirror the customer sheet"),),
        )

    def _sweep(self, b: Build[RrsSettings]) -> None:
        self.sweep_fn = b.function(
            contract.SWEEP,
            "Stragglers past due and not terminal: re-enqueue or escalate (opening hours only)",
            (
                Grant(
                    "QueryStragglers",
                    ("dynamodb:Query",),
                    (self.requests.index_arn(contract.REQUESTS_INDEX),),
                ),
                self.requests.grant("dynamodb:UpdateItem", sid="MarkSwept"),
                self.work.grant_send(sid="Requeue"),
                self.escalations.grant_send(sid="EscalateStraggler"),
                # The daily notice of degradations: read the notes, mark them notified.
                self.requests.grant_degradation_items(
                    "dynamodb:GetItem", contract.DEGRADABLE, sid="ReadDegradationNotes"
                ),
                self.requests.grant_degradation_items(
                    "dynamodb:UpdateItem", contract.DEGRADABLE, sid="MarkNotesNotified"
                ),
            ),
            contract.SweepSettings.environment(b.values),
            vendored=("tzdata",),
            schedules=(
                Schedule(contract.SWEEP, b.s.sweep_schedule, "re-drive or escalate stragglers"),
            ),
        )

    @staticmethod
    def _notes(function: str) -> list[tuple[str, str]]:
        """The (kind, function) notes ``function`` writes."""
        return [(kind, fn) for kind, fn in contract.DEGRADABLE if fn == function]

    def _outputs(self) -> None:
        """The operator-facing outputs."""
        self.finish(
            {
                "webhook_url": self.webhook_fn.function_url,
                "work_queue_url": self.work.url,
                "escalations_queue_url": self.escalations.url,
                "schedule_group": self.requests_group.name,
                "tables": {
                    "jobs": self.jobs.physical_name,
                    "requests": self.requests.physical_name,
                    "customers": self.customers.physical_name,
                    "optout": self.optout.physical_name,
                    "audit": self.audit.physical_name,
                },
                "secrets": {
                    "webhook_signing_secret": self.webhook_secret.physical_name,
                    "messaging_key": self.messaging_key.physical_name,
                    "forget_salt": self.forget_salt.physical_name,
                },
                "functions": {
                    "sender": self.sender_fn.physical_name,
                    "escalator": self.escalator_fn.physical_name,
                    "sync": self.sync_fn.physical_name,
                    "sweep": self.sweep_fn.physical_name,
                },
            }
        )
