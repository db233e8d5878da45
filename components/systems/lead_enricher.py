"""Lead enricher (document 001): three lanes in, a five-stage chain, two outputs, three jobs.

Ingress: ler-intake behind a Function URL (shared secret checked in-function, or AWS_IAM), an
S3 trigger on ler-raw for the upload prefix, and the SES inbound lane storing mail in ler-raw
under the mail prefix (which triggers intake too). Intake keeps raw form payloads under a third
prefix that triggers nothing, and its role can only write there, so intake can never re-invoke
itself. Chain: ler-intake-queue -> ler-normalize, then EventBridge rules on the default bus
route le.normalized / le.enriched / le.deduped / le.clean / le.junk to ler-enrich, ler-dedupe,
ler-filter, ler-push and ler-junk-writer. ler-dlq catches every asynchronous failure (each
rule's target DLQ and every asynchronously invoked function's on-failure destination).
Scheduler runs ler-retry, ler-backfill and ler-digest, each a function with its own role.

Every role is the document's IAM list narrowed to what the handler uses (object prefixes, one
index, the event types it may emit); where a handler needs more than the list, the grant says
why in its statement id and the README section explains it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

import pulumi

from components.config import LerSettings
from components.deployment import Deployment
from components.grants import Grant
from components.guarded_table import GuardedTable, GuardedTableArgs, Index, Key
from components.inbound_mail_lane import InboundMailLane, InboundMailLaneArgs, mail_writer
from components.models import model_grant
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
)
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import System, SystemArgs
from components.work_queue import CONSUME_ACTIONS, ServiceSender, WorkQueue, WorkQueueArgs
from handlers.lead_enricher import contract

PACKAGE = "handlers.lead_enricher"
PHONENUMBERS = ("phonenumberslite",)
JELLYFISH = ("jellyfish",)
EMAIL_CHECK = ("email-validator", "idna")
"""handlers.common.emails (cleanup's email rule): email-validator and the idna it imports."""
"""Jaro-Winkler for fuzzy dedupe (handlers.common.strings); compiled, the locked arm64 wheel."""
FAILS_BEFORE_DLQ = 2
""""ler-dlq catches any event that fails twice": two receives, or one retry of an async invoke."""

INTAKE_DLQ = "ler-intake-dlq"
"""ler-intake-queue's own dead-letter queue (SQS redrive), re-driven by ler-retry."""

RULES: dict[str, tuple[str, str]] = {
    "ler-enrich": ("ler-on-normalized", contract.NORMALIZED),
    "ler-dedupe": ("ler-on-enriched", contract.ENRICHED),
    "ler-filter": ("ler-on-deduped", contract.DEDUPED),
    "ler-push": ("ler-on-clean", contract.CLEAN),
    "ler-junk-writer": ("ler-on-junk", contract.JUNK),
}
"""Function -> (rule seed name, detail-type it receives)."""


def put_events(d: Deployment, sid: str, detail_types: Sequence[str]) -> Grant:
    """PutEvents on the default bus, only with this stack's source and the named types."""
    return Grant(
        sid,
        ("events:PutEvents",),
        (d.arns.event_bus(),),
        {
            "StringEquals": {
                "events:source": [contract.event_source(d.prefix)],
                "events:detail-type": sorted(detail_types),
            }
        },
    )


def send_email(d: Deployment, sid: str, sender: str) -> Grant:
    """SendEmail on the sender's SES identity, as that one From address only."""
    return Grant(
        sid,
        ("ses:SendEmail",),
        (d.sender_identity_arn(sender),),
        {"StringEquals": {"ses:FromAddress": [sender]}},
    )


def invoke(sid: str, function: ScopedLambda) -> Grant:
    """InvokeFunction on one function of this system."""
    return Grant(sid, ("lambda:InvokeFunction",), (function.arn,))


class LeadEnricher(System):
    """The lead enricher's resources, with the document's names."""

    def __init__(
        self,
        resource_name: str,
        args: SystemArgs[LerSettings],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("LeadEnricher", resource_name, opts)
        d, s = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)
        source = contract.event_source(d.prefix)

        # Storage ------------------------------------------------------------------------------
        lane_args = InboundMailLaneArgs(
            d,
            "ler-inbound",
            (s.inbound_address,),
            f"{d.name('ler-raw')}-{d.account_id}",
            contract.MAIL_PREFIX,
            activate=s.activate_inbound_rule_set,
        )
        raw = PrivateBucket(
            "ler-raw",
            PrivateBucketArgs(
                d, "ler-raw", versioned=True, service_writers=(mail_writer(lane_args),)
            ),
            child,
        )
        if raw.physical_name != lane_args.bucket_name:
            raise ValueError("the mail lane must write into ler-raw")
        records = PrivateBucket("ler-records", PrivateBucketArgs(d, "ler-records"), child)
        junk = PrivateBucket("ler-junk", PrivateBucketArgs(d, "ler-junk"), child)
        InboundMailLane(
            "ler-inbound",
            dataclasses.replace(lane_args, bucket_ready=(raw.bucket, raw.policy)),
            child,
        )
        identity = GuardedTable(
            "ler-identity",
            GuardedTableArgs(
                d,
                "ler-identity",
                Key("id_key"),
                indexes=(Index(contract.IDENTITY_BY_CRM_ID, Key("crm_id")),),
            ),
            child,
        )
        cache = GuardedTable(
            "ler-enrich-cache",
            GuardedTableArgs(d, "ler-enrich-cache", Key("domain"), ttl_attribute="ttl"),
            child,
        )

        # Queues -------------------------------------------------------------------------------
        dlq = WorkQueue(
            "ler-dlq",
            WorkQueueArgs(
                d,
                "ler-dlq",
                dead_letter=True,
                service_senders=tuple(
                    ServiceSender("events.amazonaws.com", d.arns.event_rule(d.name(rule)))
                    for rule, _ in RULES.values()
                ),
            ),
            child,
        )
        normalize_timeout = 60
        intake_queue = WorkQueue(
            "ler-intake-queue",
            WorkQueueArgs(
                d,
                "ler-intake-queue",
                dead_letter_name=INTAKE_DLQ,
                max_receive_count=FAILS_BEFORE_DLQ,
                visibility_timeout_s=6 * normalize_timeout,
            ),
            child,
        )
        assert intake_queue.dlq_arn is not None

        # Secrets ------------------------------------------------------------------------------
        enrichment_key = SecretSlot(
            "ler-enrichment-key",
            SecretSlotArgs(
                d,
                "ler-enrichment-key",
                "Firmographic provider API key (People Data Labs or Apollo, as enrichmentProvider "
                "says), plain string",
            ),
            child,
        )
        crm_key = SecretSlot(
            "ler-crm-key",
            SecretSlotArgs(
                d,
                "ler-crm-key",
                "HubSpot Service Key for ler-push (bare token or JSON {\"token\": ...}) with "
                "scopes crm.objects.contacts.read and crm.objects.contacts.write",
            ),
            child,
        )
        intake_secret = (
            SecretSlot(
                "ler-intake-secret",
                SecretSlotArgs(
                    d,
                    "ler-intake-secret",
                    "Shared secret form/webhook senders present to ler-intake (plain string)",
                ),
                child,
            )
            if s.intake_auth == "shared_secret"
            else None
        )

        def function(
            name: str,
            description: str,
            memory_mb: int,
            timeout_s: int,
            grants: Sequence[Grant],
            environment: dict[str, str],
            *,
            vendored: tuple[str, ...] = (),
            url: FunctionUrl | None = None,
            bucket_trigger: BucketTrigger | None = None,
            queue_triggers: tuple[QueueTrigger, ...] = (),
            on_failure: WorkQueue | None = dlq,
        ) -> ScopedLambda:
            """One of the document's functions; chain stages get their EventBridge rule."""
            rule = RULES.get(name)
            event_rules = (
                (
                    EventRuleTrigger(
                        rule[0],
                        {"source": [source], "detail-type": [rule[1]]},
                        dead_letter=dlq,
                        max_retries=FAILS_BEFORE_DLQ,
                    ),
                )
                if rule
                else ()
            )
            module = name.removeprefix("ler-").replace("-", "_")
            return ScopedLambda(
                name,
                ScopedLambdaArgs(
                    d,
                    name,
                    description,
                    FunctionCode(f"{PACKAGE}.{module}.handler", vendored=vendored),
                    memory_mb,
                    timeout_s,
                    grants=tuple(grants),
                    environment=environment,
                    url=url,
                    bucket_trigger=bucket_trigger,
                    queue_triggers=queue_triggers,
                    event_rules=event_rules,
                    on_failure=on_failure,
                    invoked_async=on_failure is not None,
                    async_max_retries=FAILS_BEFORE_DLQ - 1,
                ),
                child,
            )

        # Ingress ------------------------------------------------------------------------------
        intake_env = {
            "RAW_BUCKET": raw.physical_name,
            "JUNK_BUCKET": junk.physical_name,
            "INTAKE_QUEUE_URL": intake_queue.url,
            "INTAKE_AUTH": s.intake_auth,
            "MIN_SUBMIT_SECONDS": str(s.min_submit_seconds),
        }
        intake_grants = [
            raw.grant("s3:PutObject", prefixes=(contract.FORM_PREFIX,), sid="KeepRawFormPayloads"),
            raw.grant("s3:GetObject", prefixes=contract.TRIGGER_PREFIXES, sid="ReadMailAndUploads"),
            # An upload's progress and report, under a prefix that triggers nothing.
            raw.grant(
                "s3:GetObject", "s3:PutObject", prefixes=(contract.REPORT_PREFIX,), sid="UploadReports"
            ),
            # A long upload goes on in a new asynchronous invocation of intake itself (its
            # own ARN only; the cursor in the report only moves forward, so it ends).
            Grant(
                "ContinueLongUploads",
                ("lambda:InvokeFunction",),
                (d.arns.lambda_function(d.name("ler-intake")),),
            ),
            junk.grant("s3:PutObject", prefixes=(contract.JUNK_PREFIX,), sid="DropObviousJunk"),
            intake_queue.grant_send(),
        ]
        if intake_secret is not None:
            intake_env["INTAKE_SECRET_ID"] = intake_secret.physical_name
            intake_grants.append(intake_secret.grant_read())
        intake = function(
            "ler-intake",
            "Front door: form/webhook URL, SES mail and CSV uploads; spam pre-screen",
            256,
            60,
            intake_grants,
            intake_env,
            url=FunctionUrl(
                "NONE",
                public_reason="ler-intake-secret checked in-function (header or HMAC signature)",
            )
            if intake_secret is not None
            else FunctionUrl("AWS_IAM"),
            bucket_trigger=BucketTrigger(raw, contract.TRIGGER_PREFIXES),
            on_failure=dlq,
            # The mail lane picks the sender with the shared email check (Reply-To, else From).
            vendored=EMAIL_CHECK,
        )

        # The chain ----------------------------------------------------------------------------
        function(
            "ler-normalize",
            "Deterministic field cleanup; the model only for ambiguous fields",
            512,
            normalize_timeout,
            [
                records.grant(
                    "s3:PutObject",
                    prefixes=(contract.NORMALIZED_PREFIX,),
                    sid="WriteNormalizedRecord",
                ),
                model_grant(d, s.normalize_model, sid="InvokeNormalizeModel"),
                put_events(d, "EmitNormalized", (contract.NORMALIZED,)),
            ],
            {
                "EVENT_SOURCE": source,
                "RECORDS_BUCKET": records.physical_name,
                "NORMALIZE_MODEL_ID": s.normalize_model.active,
                "DEFAULT_PHONE_REGION": s.default_phone_region,
            },
            vendored=PHONENUMBERS + EMAIL_CHECK,
            queue_triggers=(QueueTrigger(intake_queue, batch_size=1),),
            on_failure=None,  # polled from SQS, never invoked asynchronously
        )
        function(
            "ler-enrich",
            "Firmographics per company domain, cached with a TTL",
            256,
            30,
            [
                cache.grant("dynamodb:GetItem", "dynamodb:PutItem"),
                enrichment_key.grant_read(),
                put_events(d, "EmitEnriched", (contract.ENRICHED,)),
            ],
            {
                "EVENT_SOURCE": source,
                "CACHE_TABLE": cache.physical_name,
                "ENRICHMENT_SECRET_ID": enrichment_key.physical_name,
                "ENRICHMENT_PROVIDER": s.enrichment_provider,
                "ENRICHMENT_BASE_URL": s.enrichment_url,
                "ENRICHMENT_API_VERSION": s.enrichment_version,
                "CACHE_TTL_DAYS": str(s.enrich_cache_days),
            },
            on_failure=dlq,
        )
        identity_index = Grant(
            "ReadIdentityByCrmId",
            ("dynamodb:Query",),
            (identity.index_arn(contract.IDENTITY_BY_CRM_ID),),
        )
        function(
            "ler-dedupe",
            "Exact keys, fuzzy scoring and the model for the ambiguous band",
            256,
            30,
            [
                identity.grant("dynamodb:GetItem", sid="ReadIdentityKeys"),
                identity_index,
                model_grant(d, s.dedupe_model, sid="InvokeDedupeModel"),
                put_events(d, "EmitDeduped", (contract.DEDUPED,)),
            ],
            {
                "EVENT_SOURCE": source,
                "IDENTITY_TABLE": identity.physical_name,
                "IDENTITY_INDEX": contract.IDENTITY_BY_CRM_ID,
                "DEDUPE_MODEL_ID": s.dedupe_model.active,
                "LINK_SCORE": str(s.dedupe_link_score),
                "AMBIGUOUS_SCORE": str(s.dedupe_ambiguous_score),
            },
            on_failure=dlq,
            vendored=JELLYFISH,
        )
        function(
            "ler-filter",
            "Deterministic junk signals; the model only for borderline leads",
            256,
            30,
            [
                model_grant(d, s.filter_model, sid="InvokeFilterModel"),
                put_events(d, "EmitCleanOrJunk", (contract.CLEAN, contract.JUNK)),
            ],
            {
                "EVENT_SOURCE": source,
                "FILTER_MODEL_ID": s.filter_model.active,
                "JUNK_SCORE": str(s.junk_score),
                "BORDERLINE_SCORE": str(s.borderline_score),
            },
            on_failure=dlq,
        )
        push = function(
            "ler-push",
            "Final CRM check, create or link (fill empty fields only), records, identity",
            256,
            30,
            [
                crm_key.grant_read(),
                identity.grant_conditional_write(),
                dataclasses.replace(identity_index, sid="ReadIdentityByCrmIdForMerges"),
                records.grant(
                    "s3:PutObject", prefixes=(contract.RECORDS_PREFIX,), sid="WriteCleanRecord"
                ),
            ],
            {
                "IDENTITY_TABLE": identity.physical_name,
                "IDENTITY_INDEX": contract.IDENTITY_BY_CRM_ID,
                "RECORDS_BUCKET": records.physical_name,
                "CRM_SECRET_ID": crm_key.physical_name,
                "CRM_BASE_URL": s.crm_base_url,
                "HUBSPOT_API_VERSION": args.hubspot_api_version,
                "DEFAULT_PHONE_REGION": s.default_phone_region,
            },
            vendored=PHONENUMBERS + EMAIL_CHECK + JELLYFISH,
            on_failure=dlq,
        )
        function(
            "ler-junk-writer",
            "Appends each dropped lead and its reason to ler-junk",
            128,
            10,
            [junk.grant("s3:PutObject", prefixes=(contract.JUNK_PREFIX,), sid="WriteJunkLog")],
            {"JUNK_BUCKET": junk.physical_name},
            on_failure=dlq,
        )

        # Scheduled jobs -----------------------------------------------------------------------
        retry = function(
            "ler-retry",
            "Re-drives ler-dlq and the intake dead letters, retries pending enrichments",
            256,
            120,
            [
                dlq.grant_consume(sid="DrainLerDlq"),
                Grant("DrainIntakeDeadLetters", CONSUME_ACTIONS, (intake_queue.dlq_arn,)),
                intake_queue.grant_send(sid="RedriveToIntakeQueue"),
                put_events(d, "RedrivePipelineEvents", contract.PIPELINE_EVENTS),
                invoke("RedriveMailAndUploadsToIntake", intake),
                cache.grant("dynamodb:Scan", sid="FindPendingEnrichments"),
                send_email(d, "AlertDeadLetters", s.sender_email),
            ],
            {
                "EVENT_SOURCE": source,
                "DLQ_URL": dlq.url,
                "INTAKE_DLQ_URL": d.arns.queue_url(d.name(INTAKE_DLQ)),
                "INTAKE_QUEUE_URL": intake_queue.url,
                "INTAKE_FUNCTION_NAME": intake.physical_name,
                "CACHE_TABLE": cache.physical_name,
                "SENDER_EMAIL": s.sender_email,
                "ALERT_RECIPIENT": s.digest_recipient,
                "MAX_RETRY_PASSES": str(s.max_retry_passes),
                "DLQ_ALERT_THRESHOLD": str(s.dlq_alert_threshold),
            },
            on_failure=dlq,
        )
        backfill = function(
            "ler-backfill",
            "Re-enriches pending leads; re-syncs ler-identity from the CRM export via ler-push",
            256,
            900,
            [
                cache.grant("dynamodb:Scan", sid="FindPendingEnrichments"),
                put_events(d, "ReEnrichPending", (contract.NORMALIZED,)),
                invoke("ResyncIdentityThroughPush", push),
            ],
            {
                "EVENT_SOURCE": source,
                "CACHE_TABLE": cache.physical_name,
                "PUSH_FUNCTION_NAME": push.physical_name,
            },
            on_failure=dlq,
        )
        digest = function(
            "ler-digest",
            "Emails the previous day's junk drops by reason",
            256,
            60,
            [
                dataclasses.replace(
                    junk.grant_list(sid="ListJunkLog"),
                    conditions={"StringLike": {"s3:prefix": [f"{contract.JUNK_PREFIX}*"]}},
                ),
                junk.grant("s3:GetObject", prefixes=(contract.JUNK_PREFIX,), sid="ReadJunkLog"),
                send_email(d, "SendJunkDigest", s.sender_email),
            ],
            {
                "JUNK_BUCKET": junk.physical_name,
                "SENDER_EMAIL": s.sender_email,
                "DIGEST_RECIPIENT": s.digest_recipient,
            },
            on_failure=dlq,
        )
        jobs_group = schedule_group("ler-schedules", d, d.system, child)
        for job, expression, what in (
            (retry, s.retry_schedule, "Re-drive dead letters and pending enrichments"),
            (backfill, s.backfill_schedule, "Nightly re-enrichment and identity re-sync"),
            (digest, s.digest_schedule, "Daily junk digest"),
        ):
            ScheduledJob(
                f"{job.args.name}-schedule",
                ScheduledJobArgs(
                    d,
                    job.args.name,
                    expression,
                    job,
                    jobs_group,
                    timezone=s.schedule_timezone,
                    payload=json.dumps({"job": job.args.name}),
                    description=what,
                ),
                child,
            )

        self.finish(
            {
                "intake_url": intake.function_url,
                "intake_auth": s.intake_auth,
                "intake_secret": intake_secret.physical_name if intake_secret else None,
                "raw_bucket": raw.bucket_name,
                "upload_prefix": contract.UPLOAD_PREFIX,
                "records_bucket": records.bucket_name,
                "junk_bucket": junk.bucket_name,
                "identity_table": identity.table_name,
                "enrich_cache_table": cache.table_name,
                "intake_queue_url": intake_queue.queue_url,
                "dlq_url": dlq.queue_url,
                "inbound_rule_set": d.name("ler-inbound"),
                "secrets": [
                    slot.physical_name
                    for slot in (enrichment_key, crm_key, intake_secret)
                    if slot is not None
                ],
            }
        )
