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

Names, tables and each function's environment come from ``handlers/lead_enricher/contract.py``
(the handlers read the same settings records); each function is one ``FunctionFactory`` call
with its triggers (queue, bucket, the chain stage's rule) at the call site.

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
from components.guarded_table import GuardedTable, GuardedTableArgs
from components.inbound_mail_lane import InboundMailLane, InboundMailLaneArgs, mail_writer
from components.models import model_grant
from components.private_bucket import PrivateBucket, PrivateBucketArgs
from components.scheduled_job import Schedule
from components.scoped_lambda import (
    BucketTrigger,
    EventRuleTrigger,
    FunctionUrl,
    QueueTrigger,
    ScopedLambda,
)
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import System, SystemArgs
from components.systems.function_factory import FunctionFactory
from components.work_queue import (
    CONSUME_ACTIONS,
    ServiceSender,
    WorkQueue,
    WorkQueueArgs,
    consumer_visibility,
)
from handlers.common.degradations import key as degradation_key
from handlers.lead_enricher import contract

PACKAGE = "handlers.lead_enricher"
PHONENUMBERS = ("phonenumberslite",)
JELLYFISH = ("jellyfish",)
"""Jaro-Winkler for fuzzy dedupe (handlers.common.strings); compiled, the locked arm64 wheel."""
EMAIL_CHECK = ("email-validator", "idna")
"""handlers.common.emails (cleanup's email rule): email-validator and the idna it imports."""
FAILS_BEFORE_DLQ = 2
""""ler-dlq catches any event that fails twice": two receives, or one retry of an async invoke."""
ASYNC_RETRIES = FAILS_BEFORE_DLQ - 1

SIZES: dict[str, tuple[int, int]] = {
    contract.INTAKE_FUNCTION: (256, 60),
    contract.NORMALIZE_FUNCTION: (512, 60),
    contract.ENRICH_FUNCTION: (256, 30),
    contract.DEDUPE_FUNCTION: (256, 30),
    contract.FILTER_FUNCTION: (256, 30),
    contract.PUSH_FUNCTION: (256, 30),
    contract.JUNK_WRITER_FUNCTION: (128, 10),
    contract.RETRY_FUNCTION: (256, 120),
    contract.BACKFILL_FUNCTION: (256, 900),
    contract.DIGEST_FUNCTION: (256, 60),
}
"""Memory (MB) and timeout (s) per function."""

RULES: dict[str, tuple[str, str]] = {
    contract.ENRICH_FUNCTION: ("ler-on-normalized", contract.NORMALIZED),
    contract.DEDUPE_FUNCTION: ("ler-on-enriched", contract.ENRICHED),
    contract.FILTER_FUNCTION: ("ler-on-deduped", contract.DEDUPED),
    contract.PUSH_FUNCTION: ("ler-on-clean", contract.CLEAN),
    contract.JUNK_WRITER_FUNCTION: ("ler-on-junk", contract.JUNK),
}
"""Chain stage -> (rule seed name, detail-type it receives)."""


def put_events(d: Deployment, sid: str, detail_types: Sequence[str]) -> Grant:
    """PutEvents on the chain's bus, only with this stack's source and the named types."""
    return Grant(
        sid,
        ("events:PutEvents",),
        (d.arns.event_bus(contract.EVENT_BUS),),
        {
            "StringEquals": {
                "events:source": [contract.event_source(d.prefix)],
                "events:detail-type": sorted(detail_types),
            }
        },
    )



def chain_stage(name: str, source: str, dlq: WorkQueue) -> EventRuleTrigger:
    """A chain stage's rule: this stack's events of the one type the stage receives."""
    rule, detail_type = RULES[name]
    return EventRuleTrigger(
        rule,
        {"source": [source], "detail-type": [detail_type]},
        dead_letter=dlq,
        max_retries=FAILS_BEFORE_DLQ,
        bus=contract.EVENT_BUS,
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
        function = FunctionFactory(d, PACKAGE, SIZES, child)

        # Storage ------------------------------------------------------------------------------
        lane_args = InboundMailLaneArgs(
            d,
            contract.INBOUND_LANE,
            (s.inbound_address,),
            f"{d.name(contract.RAW_BUCKET)}-{d.account_id}",
            contract.MAIL_PREFIX,
            activate=s.activate_inbound_rule_set,
        )
        raw = PrivateBucket(
            contract.RAW_BUCKET,
            PrivateBucketArgs(
                d, contract.RAW_BUCKET, versioned=True, service_writers=(mail_writer(lane_args),)
            ),
            child,
        )
        if raw.physical_name != lane_args.bucket_name:
            raise ValueError("the mail lane must write into ler-raw")
        records = PrivateBucket(
            contract.RECORDS_BUCKET, PrivateBucketArgs(d, contract.RECORDS_BUCKET), child
        )
        junk = PrivateBucket(contract.JUNK_BUCKET, PrivateBucketArgs(d, contract.JUNK_BUCKET), child)
        InboundMailLane(
            contract.INBOUND_LANE,
            dataclasses.replace(lane_args, bucket_ready=(raw.bucket, raw.policy)),
            child,
        )
        identity = GuardedTable(
            contract.IDENTITY.name, GuardedTableArgs.of(d, contract.IDENTITY), child
        )
        cache = GuardedTable(
            contract.ENRICH_CACHE.name, GuardedTableArgs.of(d, contract.ENRICH_CACHE), child
        )


        def note_refusal(function_name: str) -> Grant:
            """A model caller may note its own refusal in ler-enrich-cache, nothing else."""
            return cache.grant_degradation_items(
                "dynamodb:UpdateItem",
                [degradation_key("ModelRefused", function_name)],
                sid="NoteRefusedModel",
            )

        # Queues -------------------------------------------------------------------------------
        dlq = WorkQueue(
            contract.DLQ,
            WorkQueueArgs(
                d,
                contract.DLQ,
                dead_letter=True,
                service_senders=tuple(
                    ServiceSender("events.amazonaws.com", d.arns.event_rule(d.name(rule)))
                    for rule, _ in RULES.values()
                ),
            ),
            child,
        )
        intake_queue = WorkQueue(
            contract.INTAKE_QUEUE,
            WorkQueueArgs(
                d,
                contract.INTAKE_QUEUE,
                dead_letter_name=contract.INTAKE_DLQ,
                max_receive_count=FAILS_BEFORE_DLQ,
                visibility_timeout_s=consumer_visibility(
                    function.timeout(contract.NORMALIZE_FUNCTION)
                ),
            ),
            child,
        )
        assert intake_queue.dlq_arn is not None

        # Secrets ------------------------------------------------------------------------------
        enrichment_key = SecretSlot(
            contract.ENRICHMENT_KEY,
            SecretSlotArgs(
                d,
                contract.ENRICHMENT_KEY,
                "Firmographic provider API key (People Data Labs or Apollo, as enrichmentProvider "
                "says), plain string",
            ),
            child,
        )
        crm_key = SecretSlot(
            contract.CRM_KEY,
            SecretSlotArgs(
                d,
                contract.CRM_KEY,
                "HubSpot Service Key for ler-push (bare token or JSON {\"token\": ...}) with "
                "scopes crm.objects.contacts.read and crm.objects.contacts.write",
            ),
            child,
        )
        intake_secret = (
            SecretSlot(
                contract.INTAKE_SECRET,
                SecretSlotArgs(
                    d,
                    contract.INTAKE_SECRET,
                    "Shared secret form/webhook senders present to ler-intake (plain string)",
                ),
                child,
            )
            if s.intake_auth == "shared_secret"
            else None
        )

        # Every function's environment, by settings field (each record picks its own).
        values: dict[str, pulumi.Input[str] | int | float | None] = {
            "event_source": source,
            "raw_bucket": raw.physical_name,
            "records_bucket": records.physical_name,
            "junk_bucket": junk.physical_name,
            "identity_table": identity.physical_name,
            "identity_index": contract.IDENTITY_BY_CRM_ID,
            "cache_table": cache.physical_name,
            "intake_queue_url": intake_queue.url,
            "dlq_url": dlq.url,
            "intake_dlq_url": d.arns.queue_url(d.name(contract.INTAKE_DLQ)),
            "intake_function_name": d.name(contract.INTAKE_FUNCTION),
            "push_function_name": d.name(contract.PUSH_FUNCTION),
            "intake_auth": s.intake_auth,
            "intake_secret_id": intake_secret.physical_name if intake_secret else None,
            "min_submit_seconds": s.min_submit_seconds,
            "normalize_model_id": s.normalize_model.active,
            "dedupe_model_id": s.dedupe_model.active,
            "filter_model_id": s.filter_model.active,
            "default_phone_region": s.default_phone_region,
            "enrichment_secret_id": enrichment_key.physical_name,
            "enrichment_provider": s.enrichment_provider,
            "enrichment_base_url": s.enrichment_url,
            "enrichment_api_version": s.enrichment_version,
            "cache_ttl_days": s.enrich_cache_days,
            "link_score": s.dedupe_link_score,
            "ambiguous_score": s.dedupe_ambiguous_score,
            "junk_score": s.junk_score,
            "borderline_score": s.borderline_score,
            "crm_secret_id": crm_key.physical_name,
            "crm_base_url": s.crm_base_url,
            "hubspot_api_version": args.hubspot_api_version,
            "sender_email": s.sender_email,
            "alert_recipient": s.digest_recipient,
            "digest_recipient": s.digest_recipient,
            "max_retry_passes": s.max_retry_passes,
            "dlq_alert_threshold": s.dlq_alert_threshold,
        }

        # Ingress ------------------------------------------------------------------------------
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
                (d.arns.lambda_function(d.name(contract.INTAKE_FUNCTION)),),
            ),
            junk.grant("s3:PutObject", prefixes=(contract.JUNK_PREFIX,), sid="DropObviousJunk"),
            intake_queue.grant_send(),
        ]
        if intake_secret is not None:
            intake_grants.append(intake_secret.grant_read())
        intake = function(
            contract.INTAKE_FUNCTION,
            "Front door: form/webhook URL, SES mail and CSV uploads; spam pre-screen",
            intake_grants,
            contract.IntakeSettings.environment(values),
            url=FunctionUrl(
                "NONE",
                public_reason="ler-intake-secret checked in-function (header or HMAC signature)",
            )
            if intake_secret is not None
            else FunctionUrl("AWS_IAM"),
            # Also invoked asynchronously by itself (long uploads) and by ler-retry.
            bucket=BucketTrigger(raw, contract.TRIGGER_PREFIXES),
            on_failure=dlq,
            async_max_retries=ASYNC_RETRIES,
            # The mail lane picks the sender with the shared email check (Reply-To, else From).
            vendored=EMAIL_CHECK,
        )

        # The chain ----------------------------------------------------------------------------
        function(
            contract.NORMALIZE_FUNCTION,
            "Deterministic field cleanup; the model only for ambiguous fields",
            [
                records.grant(
                    "s3:PutObject",
                    prefixes=(contract.NORMALIZED_PREFIX,),
                    sid="WriteNormalizedRecord",
                ),
                model_grant(d, s.normalize_model, sid="InvokeNormalizeModel"),
                note_refusal(contract.NORMALIZE_FUNCTION),
                put_events(d, "EmitNormalized", (contract.NORMALIZED,)),
            ],
            contract.NormalizeSettings.environment(values),
            # Polled from SQS, never invoked asynchronously: no on-failure destination.
            queues=(QueueTrigger(intake_queue, batch_size=1),),
            vendored=PHONENUMBERS + EMAIL_CHECK,
        )
        function(
            contract.ENRICH_FUNCTION,
            "Firmographics per company domain, cached with a TTL",
            [
                cache.grant("dynamodb:GetItem", "dynamodb:PutItem"),
                enrichment_key.grant_read(),
                put_events(d, "EmitEnriched", (contract.ENRICHED,)),
            ],
            contract.EnrichSettings.environment(values),
            events=(chain_stage(contract.ENRICH_FUNCTION, source, dlq),),
            on_failure=dlq,
            async_max_retries=ASYNC_RETRIES,
        )
        identity_index = Grant(
            "ReadIdentityByCrmId",
            ("dynamodb:Query",),
            (identity.index_arn(contract.IDENTITY_BY_CRM_ID),),
        )
        function(
            contract.DEDUPE_FUNCTION,
            "Exact keys, fuzzy scoring and the model for the ambiguous band",
            [
                identity.grant("dynamodb:GetItem", sid="ReadIdentityKeys"),
                identity_index,
                model_grant(d, s.dedupe_model, sid="InvokeDedupeModel"),
                note_refusal(contract.DEDUPE_FUNCTION),
                put_events(d, "EmitDeduped", (contract.DEDUPED,)),
            ],
            contract.DedupeSettings.environment(values),
            events=(chain_stage(contract.DEDUPE_FUNCTION, source, dlq),),
            on_failure=dlq,
            async_max_retries=ASYNC_RETRIES,
            vendored=JELLYFISH,
        )
        function(
            contract.FILTER_FUNCTION,
            "Deterministic junk signals; the model only for borderline leads",
            [
                model_grant(d, s.filter_model, sid="InvokeFilterModel"),
                note_refusal(contract.FILTER_FUNCTION),
                put_events(d, "EmitCleanOrJunk", (contract.CLEAN, contract.JUNK)),
            ],
            contract.FilterSettings.environment(values),
            events=(chain_stage(contract.FILTER_FUNCTION, source, dlq),),
            on_failure=dlq,
            async_max_retries=ASYNC_RETRIES,
        )
        push = function(
            contract.PUSH_FUNCTION,
            "Final CRM check, create or link (fill empty fields only), records, identity",
            [
                crm_key.grant_read(),
                identity.grant_conditional_write(),
                dataclasses.replace(identity_index, sid="ReadIdentityByCrmIdForMerges"),
                records.grant(
                    "s3:PutObject", prefixes=(contract.RECORDS_PREFIX,), sid="WriteCleanRecord"
                ),
                cache.grant_degradation_items(
                    "dynamodb:UpdateItem",
                    [degradation_key("CrmRejected", contract.PUSH_FUNCTION)],
                    sid="NoteCrmRefusal",
                ),
            ],
            contract.PushSettings.environment(values),
            events=(chain_stage(contract.PUSH_FUNCTION, source, dlq),),
            on_failure=dlq,
            async_max_retries=ASYNC_RETRIES,
            vendored=PHONENUMBERS + EMAIL_CHECK + JELLYFISH,
        )
        function(
            contract.JUNK_WRITER_FUNCTION,
            "Appends each dropped lead and its reason to ler-junk",
            [junk.grant("s3:PutObject", prefixes=(contract.JUNK_PREFIX,), sid="WriteJunkLog")],
            contract.JunkWriterSettings.environment(values),
            events=(chain_stage(contract.JUNK_WRITER_FUNCTION, source, dlq),),
            on_failure=dlq,
            async_max_retries=ASYNC_RETRIES,
        )

        # Scheduled jobs ------------------------------------------------------------------------
        function(
            contract.RETRY_FUNCTION,
            "Re-drives ler-dlq and the intake dead letters, retries pending enrichments",
            [
                dlq.grant_consume(sid="DrainLerDlq"),
                Grant("DrainIntakeDeadLetters", CONSUME_ACTIONS, (intake_queue.dlq_arn,)),
                intake_queue.grant_send(sid="RedriveToIntakeQueue"),
                put_events(d, "RedrivePipelineEvents", contract.PIPELINE_EVENTS),
                invoke("RedriveMailAndUploadsToIntake", intake),
                cache.grant("dynamodb:Scan", sid="FindPendingEnrichments"),
                d.grant_send_email("AlertDeadLetters", s.sender_email),
            ],
            contract.RetrySettings.environment(values),
            schedules=(
                Schedule(
                    contract.RETRY_FUNCTION,
                    s.retry_schedule,
                    "Re-drive dead letters and pending enrichments",
                    json.dumps({"job": contract.RETRY_FUNCTION}),
                    s.schedule_timezone,
                ),
            ),
            on_failure=dlq,
            async_max_retries=ASYNC_RETRIES,
        )
        function(
            contract.BACKFILL_FUNCTION,
            "Re-enriches pending leads; re-syncs ler-identity from the CRM export via ler-push",
            [
                cache.grant("dynamodb:Scan", sid="FindPendingEnrichments"),
                put_events(d, "ReEnrichPending", (contract.NORMALIZED,)),
                invoke("ResyncIdentityThroughPush", push),
            ],
            contract.BackfillSettings.environment(values),
            schedules=(
                Schedule(
                    contract.BACKFILL_FUNCTION,
                    s.backfill_schedule,
                    "Nightly re-enrichment and identity re-sync",
                    json.dumps({"job": contract.BACKFILL_FUNCTION}),
                    s.schedule_timezone,
                ),
            ),
            on_failure=dlq,
            async_max_retries=ASYNC_RETRIES,
        )
        function(
            contract.DIGEST_FUNCTION,
            "Emails the previous day's junk drops by reason",
            [
                dataclasses.replace(
                    junk.grant_list(sid="ListJunkLog"),
                    conditions={"StringLike": {"s3:prefix": [f"{contract.JUNK_PREFIX}*"]}},
                ),
                junk.grant("s3:GetObject", prefixes=(contract.JUNK_PREFIX,), sid="ReadJunkLog"),
                d.grant_send_email("SendJunkDigest", s.sender_email),
                cache.grant_degradation_items(
                    "dynamodb:GetItem",
                    [degradation_key(kind, fn) for kind, fn in contract.DEGRADABLE],
                    sid="ReadDegradationNotes",
                ),
            ],
            contract.DigestSettings.environment(values),
            schedules=(
                Schedule(
                    contract.DIGEST_FUNCTION,
                    s.digest_schedule,
                    "Daily junk digest",
                    json.dumps({"job": contract.DIGEST_FUNCTION}),
                    s.schedule_timezone,
                ),
            ),
            on_failure=dlq,
            async_max_retries=ASYNC_RETRIES,
        )

        # Refused models (normalize, dedupe, filter) and HubSpot's required-property refusals
        # in ler-push: one alarm for the system, named in the next junk digest.
        d.watch_degradations(self)

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
