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
why in its statement id and handlers/lead_enricher/README.md explains it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import cast

import pulumi

from components.config import LerSettings
from components.deployment import Deployment
from components.grants import Grant
from components.guarded_table import GuardedTable, GuardedTableArgs
from components.inbound_mail_lane import InboundMailLane, InboundMailLaneArgs, mail_writer
from components.models import model_grant
from components.personal_data import PersonalData, Retention, function_logs, messages
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
from components.systems.base import Build, System, SystemArgs, settings_values
from components.systems.function_factory import FunctionFactory
from components.work_queue import (
    CONSUME_ACTIONS,
    ServiceSender,
    WorkQueue,
    WorkQueueArgs,
    consumer_visibility,
)
from handlers.common.forgotten import FORGOTTEN_PREFIX
from handlers.lead_enricher import contract

PACKAGE = "handlers.lead_enricher"
LEAD_FIELDS = ("names", "email addresses", "phone numbers", "companies", "job titles", "messages")
"""What a lead carries from its form, mail or upload row."""
NONCURRENT_DAYS = 7
"""Days an overwritten original's old version is kept in ler-raw: a week to notice it."""
PHONENUMBERS = ("phonenumberslite",)
JELLYFISH = ("jellyfish",)
"""Jaro-Winkler for fuzzy dedupe (handlers.common.strings); compiled, the locked arm64 wheel."""
EMAIL_CHECK = ("email-validator", "idna")
"""handlers.common.emails (cleanup's email rule): email-validator and the idna it imports."""
FAILS_BEFORE_DLQ = 2
""""ler-dlq catches any event that fails twice": two receives, or one retry of an async invoke."""
ASYNC_RETRIES = FAILS_BEFORE_DLQ - 1
NORMALIZE_CONCURRENCY = 5
"""At most five ler-normalize invocations at once: a 10,000-line upload waits on
ler-intake-queue and enters the paid chain (Bedrock, the enrichment provider, HubSpot) at the
pace five workers take it, as upsr-picker and rrs-sender are paced."""
INTAKE_SENDERS = "the forms and tools that post leads to the intake"
"""Where the intake's address is set up outside AWS (FunctionUrl.registered_in)."""

SIZES: dict[str, tuple[int, int]] = {
    # A public surface answers a caller who waits (Shopify drops a webhook after 5 s): 512 MB,
    # chosen by `make bench-init`: a first invocation costs 240-470 ms of CPU (more as this
    # machine's load grows), which with its AWS waits predicts 1.0-1.8 s here against the
    # 1.5 s target; at 256 MB (a seventh of a vCPU) it would be 2-3.5 s.
    contract.INTAKE_FUNCTION: (512, 60),
    contract.NORMALIZE_FUNCTION: (512, 60),
    contract.ENRICH_FUNCTION: (256, 30),
    contract.DEDUPE_FUNCTION: (256, 30),
    contract.FILTER_FUNCTION: (256, 30),
    contract.PUSH_FUNCTION: (256, 30),
    contract.JUNK_WRITER_FUNCTION: (128, 10),
    contract.RETRY_FUNCTION: (256, 120),
    contract.BACKFILL_FUNCTION: (256, 900),
    contract.DIGEST_FUNCTION: (256, 60),
    # Public too (a person taps the digest's link): `make bench-init` measured 250 ms of CPU
    # for its first page, 1.7 s predicted at 256 MB, 0.9 s at 512 MB; later (#41, the machine
    # loaded) 430 ms, 1.6 s at 512 MB: at 1,024 MB about 0.9 s. A rescue is rare: `make cost`
    # moves by nothing.
    contract.RESCUE_FUNCTION: (1024, 10),
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


Environment = dict[str, pulumi.Input[str] | int | float | None]
"""Every value the functions' settings read, by settings field."""


class LeadEnricher(System):
    """The lead enricher's resources, with the document's names."""

    source: str
    raw: PrivateBucket
    records: PrivateBucket
    junk: PrivateBucket
    identity: GuardedTable
    cache: GuardedTable
    dlq: WorkQueue
    intake_queue: WorkQueue
    enrichment_key: SecretSlot
    crm_key: SecretSlot
    intake_secret: SecretSlot | None
    rescue_key: SecretSlot
    intake: ScopedLambda
    push: ScopedLambda
    rescue_url: pulumi.Output[str]
    identity_index: Grant

    def __init__(
        self,
        resource_name: str,
        args: SystemArgs[LerSettings],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("LeadEnricher", resource_name, opts)
        d, s = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)
        self.source = contract.event_source(d.prefix)
        function = FunctionFactory(
            d,
            PACKAGE,
            SIZES,
            child,
            logs=function_logs("lead ids", "CRM contact ids", "S3 object keys"),
            failed_events=messages(
                *LEAD_FIELDS, why="a chain event (the lead) or an S3 notification that failed"
            ),
        )
        self._storage(d, s, child)
        self._queues(d, function, child)
        self._secrets(d, s, child)
        values = self._environment(d, s, args.hubspot_api_version)
        b = Build(d, s, function, values)
        self._intake(b)
        self._normalize(b)
        self._enrich(b)
        self._dedupe(b)
        self._filter(b)
        self._push(b)
        self._junk_writer(b)
        self._retry(b)
        self._backfill(b)
        self._rescue(b)
        self._digest(b)
        # Refused models (normalize, dedupe, filter) and HubSpot's required-property refusals
        # in ler-push: one alarm for the system, named in the next junk digest.
        d.watch_degradations(self)
        d.watch_spend_caps(self)
        self._outputs(d, s)

    def _storage(self, d: Deployment, s: LerSettings, child: pulumi.ResourceOptions) -> None:
        """The three buckets (ler-raw written by the inbound mail lane too) and the two tables."""
        lane_args = InboundMailLaneArgs(
            d,
            contract.INBOUND_LANE,
            (s.inbound_address,),
            f"{d.name(contract.RAW_BUCKET)}-{d.account_id}",
            contract.MAIL_PREFIX,
            activate=s.activate_inbound_rule_set,
        )
        self.raw = PrivateBucket(
            contract.RAW_BUCKET,
            PrivateBucketArgs(
                d,
                contract.RAW_BUCKET,
                versioned=True,
                service_writers=(mail_writer(lane_args),),
                expire_days=s.raw_days,
                noncurrent_days=NONCURRENT_DAYS,
                personal_data=PersonalData(
                    (*LEAD_FIELDS, "whole inbound mails", "CSV uploads", "senders' IP addresses"),
                    "the lead's original, to run it again after a failure",
                    Retention.setting("ler", s, "raw_days", "a failure held up for days is re-run"),
                ),
            ),
            child,
        )
        if self.raw.physical_name != lane_args.bucket_name:
            raise ValueError("the mail lane must write into ler-raw")
        records = PersonalData(
            (*LEAD_FIELDS, "enriched company data", "CRM contact ids"),
            "the record each lead reached the CRM as (what was pushed, and why)",
            Retention.setting("ler", s, "records_days", "a quarter of questions about a push"),
        )
        self.records = PrivateBucket(
            contract.RECORDS_BUCKET,
            PrivateBucketArgs(
                d, contract.RECORDS_BUCKET, expire_days=s.records_days, personal_data=records
            ),
            child,
        )
        junk = PersonalData(
            (*LEAD_FIELDS, "why it was dropped"),
            "the daily junk digest and its rescue links",
            Retention.setting("ler", s, "junk_days", "outlives the digest's rescue links"),
        )
        self.junk = PrivateBucket(
            contract.JUNK_BUCKET,
            PrivateBucketArgs(d, contract.JUNK_BUCKET, expire_days=s.junk_days, personal_data=junk),
            child,
        )
        InboundMailLane(
            contract.INBOUND_LANE,
            dataclasses.replace(lane_args, bucket_ready=(self.raw.bucket, self.raw.policy)),
            child,
        )
        identity = PersonalData(
            (
                "email addresses", "phone numbers", "names", "companies", "CRM contact ids",
                "salted hashes of erased people's emails and phones, with the erasure time (366 days)",
            ),
            "to link a new lead to the CRM contact it already is; not to re-import an erased person",
            Retention.setting(
                "ler", s, "identity_days", "written again by each push and the nightly re-sync"
            ),
        )
        self.identity = GuardedTable(
            contract.IDENTITY.name, GuardedTableArgs.of(d, contract.IDENTITY, identity), child
        )
        cache = PersonalData(
            ("company domains", "lead ids of pending enrichments"),
            "firmographics cached per domain; the leads waiting for them",
            Retention.setting("ler", s, "enrich_cache_days", "a company's data stays true a quarter"),
            # Not searched by make forget: a lead id names no one once the lead's records are
            # erased, and an entry is shared by every lead of the company.
            on_request="ends with its TTL: a pending lead id names no one once make forget has erased the lead",
        )
        self.cache = GuardedTable(
            contract.ENRICH_CACHE.name, GuardedTableArgs.of(d, contract.ENRICH_CACHE, cache), child
        )

    def _queues(self, d: Deployment, function: FunctionFactory, child: pulumi.ResourceOptions) -> None:
        """ler-dlq (the chain's rules and async failures) and the intake queue with its own DLQ."""
        self.dlq = WorkQueue(
            contract.DLQ,
            WorkQueueArgs(
                d,
                contract.DLQ,
                dead_letter=True,
                service_senders=tuple(
                    ServiceSender("events.amazonaws.com", d.arns.event_rule(d.name(rule)))
                    for rule, _ in RULES.values()
                ),
                personal_data=messages(*LEAD_FIELDS, why="a chain event (the lead) no rule delivered"),
            ),
            child,
        )
        self.intake_queue = WorkQueue(
            contract.INTAKE_QUEUE,
            WorkQueueArgs(
                d,
                contract.INTAKE_QUEUE,
                dead_letter_name=contract.INTAKE_DLQ,
                max_receive_count=FAILS_BEFORE_DLQ,
                visibility_timeout_s=consumer_visibility(
                    function.timeout(contract.NORMALIZE_FUNCTION)
                ),
                personal_data=messages(*LEAD_FIELDS, why="a lead on its way to ler-normalize"),
            ),
            child,
        )

    def _secrets(self, d: Deployment, s: LerSettings, child: pulumi.ResourceOptions) -> None:
        """One secret per purpose; the intake secret only when intake checks a shared secret."""
        self.enrichment_key = SecretSlot(
            contract.ENRICHMENT_KEY,
            SecretSlotArgs(
                d,
                contract.ENRICHMENT_KEY,
                "Firmographic provider API key (People Data Labs or Apollo, as enrichmentProvider "
                "says), plain string",
            ),
            child,
        )
        self.crm_key = SecretSlot(
            contract.CRM_KEY,
            SecretSlotArgs(
                d,
                contract.CRM_KEY,
                "HubSpot Service Key for ler-push (bare token or JSON {\"token\": ...}) with "
                "scopes crm.objects.contacts.read and crm.objects.contacts.write",
            ),
            child,
        )
        self.forget_salt = SecretSlot(
            contract.FORGET_SALT,
            SecretSlotArgs(
                d,
                contract.FORGET_SALT,
                "Salt of the hashes make forget leaves on ler-identity for a person erased here: "
                "64 random characters, generated by make secrets; a new salt forgets the old hashes",
            ),
            child,
        )
        self.intake_secret = (
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
        self.rescue_key = SecretSlot(
            contract.RESCUE_KEY,
            SecretSlotArgs(
                d,
                contract.RESCUE_KEY,
                'Keyring signing the junk digest\'s rescue links: JSON {"active_kid": "k1", '
                '"keys": {"k1": "<at least 32 random characters>"}} (make secrets generates it)',
            ),
            child,
        )

    def _note_refusal(self, function_name: str) -> Grant:
        """A model caller may note its own refusal in ler-enrich-cache, nothing else."""
        return self.cache.grant_degradation_items(
            "dynamodb:UpdateItem",
            [("ModelRefused", function_name)],
            sid="NoteRefusedModel",
        )

    def _environment(self, d: Deployment, s: LerSettings, hubspot_api_version: str) -> Environment:
        """Every function's environment, by settings field (each record picks its own)."""
        return {
            **settings_values(s),
            "alert_email": d.alert_email,
            "event_source": self.source,
            "raw_bucket": self.raw.physical_name,
            "records_bucket": self.records.physical_name,
            "junk_bucket": self.junk.physical_name,
            "identity_table": self.identity.physical_name,
            "identity_index": contract.IDENTITY_BY_CRM_ID,
            "cache_table": self.cache.physical_name,
            "intake_queue_url": self.intake_queue.url,
            "dlq_url": self.dlq.url,
            "intake_dlq_url": d.arns.queue_url(d.name(contract.INTAKE_DLQ)),
            "intake_function_name": d.name(contract.INTAKE_FUNCTION),
            "push_function_name": d.name(contract.PUSH_FUNCTION),
            "backfill_function_name": d.name(contract.BACKFILL_FUNCTION),
            "intake_secret_id": self.intake_secret.physical_name if self.intake_secret else None,
            "normalize_model_id": s.normalize_model.active,
            "dedupe_model_id": s.dedupe_model.active,
            "filter_model_id": s.filter_model.active,
            "enrichment_secret_id": self.enrichment_key.physical_name,
            "enrichment_base_url": s.enrichment_url,
            "enrichment_api_version": s.enrichment_version,
            "cache_ttl_days": s.enrich_cache_days,
            "link_score": s.dedupe_link_score,
            "ambiguous_score": s.dedupe_ambiguous_score,
            "crm_secret_id": self.crm_key.physical_name,
            "forget_salt_secret_id": self.forget_salt.physical_name,
            "hubspot_api_version": hubspot_api_version,
            "alert_recipient": s.digest_recipient,
            "rescue_key_secret_id": self.rescue_key.physical_name,
            "timezone": s.schedule_timezone,
        }

    def _intake(self, b: Build[LerSettings]) -> None:
        """The front door: form/webhook URL, SES mail and CSV uploads."""
        intake_grants = [
            self.raw.grant("s3:PutObject", prefixes=(contract.FORM_PREFIX,), sid="KeepRawFormPayloads"),
            self.raw.grant("s3:GetObject", prefixes=contract.TRIGGER_PREFIXES, sid="ReadMailAndUploads"),
            # An upload's progress and report, under a prefix that triggers nothing.
            self.raw.grant(
                "s3:GetObject", "s3:PutObject", prefixes=(contract.REPORT_PREFIX,), sid="UploadReports"
            ),
            # A long upload goes on in a new asynchronous invocation of intake itself (its
            # own ARN only; the cursor in the report only moves forward, so it ends).
            Grant(
                "ContinueLongUploads",
                ("lambda:InvokeFunction",),
                (b.d.arns.lambda_function(b.d.name(contract.INTAKE_FUNCTION)),),
            ),
            self.junk.grant("s3:PutObject", prefixes=(contract.JUNK_PREFIX,), sid="DropObviousJunk"),
            self.intake_queue.grant_send(),
        ]
        if self.intake_secret is not None:
            intake_grants.append(self.intake_secret.grant_read())
        self.intake = b.function(
            contract.INTAKE_FUNCTION,
            "Front door: form/webhook URL, SES mail and CSV uploads; spam pre-screen",
            intake_grants,
            contract.IntakeSettings.environment(b.values),
            url=FunctionUrl(
                "NONE",
                public_reason="ler-intake-secret checked in-function (header or HMAC signature)",
                registered_in=INTAKE_SENDERS,
            )
            if self.intake_secret is not None
            else FunctionUrl("AWS_IAM", registered_in=INTAKE_SENDERS),
            # Also invoked asynchronously by itself (long uploads) and by ler-retry.
            bucket=BucketTrigger(self.raw, contract.TRIGGER_PREFIXES),
            on_failure=self.dlq,
            async_max_retries=ASYNC_RETRIES,
            # The mail lane picks the sender with the shared email check (Reply-To, else From).
            vendored=EMAIL_CHECK,
        )

    def _normalize(self, b: Build[LerSettings]) -> None:
        """The chain's first stage, polled from the intake queue."""
        b.function(
            contract.NORMALIZE_FUNCTION,
            "Deterministic field cleanup; the model only for ambiguous fields",
            [
                self.records.grant(
                    "s3:PutObject",
                    prefixes=(contract.NORMALIZED_PREFIX,),
                    sid="WriteNormalizedRecord",
                ),
                model_grant(b.d, b.s.normalize_model, sid="InvokeNormalizeModel"),
                self._note_refusal(contract.NORMALIZE_FUNCTION),
                self.cache.grant_spend("model", sid="CountModelCalls"),
                put_events(b.d, "EmitNormalized", (contract.NORMALIZED,)),
                *self._forgotten_check_grants(),
            ],
            contract.NormalizeSettings.environment(b.values),
            # Polled from SQS, never invoked asynchronously: no on-failure destination.
            queues=(QueueTrigger(self.intake_queue, batch_size=1, maximum_concurrency=NORMALIZE_CONCURRENCY),),
            vendored=PHONENUMBERS + EMAIL_CHECK,
        )

    def _enrich(self, b: Build[LerSettings]) -> None:
        """Firmographics per company domain."""
        b.function(
            contract.ENRICH_FUNCTION,
            "Firmographics per company domain, cached with a TTL",
            [
                self.cache.grant("dynamodb:GetItem", "dynamodb:PutItem"),
                self.cache.grant_spend("lookup", sid="CountLookups"),
                self.enrichment_key.grant_read(),
                put_events(b.d, "EmitEnriched", (contract.ENRICHED,)),
            ],
            contract.EnrichSettings.environment(b.values),
            events=(chain_stage(contract.ENRICH_FUNCTION, self.source, self.dlq),),
            on_failure=self.dlq,
            async_max_retries=ASYNC_RETRIES,
        )

    def _dedupe(self, b: Build[LerSettings]) -> None:
        """Duplicate verdicts against ler-identity."""
        self.identity_index = Grant(
            "ReadIdentityByCrmId",
            ("dynamodb:Query",),
            (self.identity.index_arn(contract.IDENTITY_BY_CRM_ID),),
        )
        b.function(
            contract.DEDUPE_FUNCTION,
            "Exact keys, fuzzy scoring and the model for the ambiguous band",
            [
                self.identity.grant("dynamodb:GetItem", sid="ReadIdentityKeys"),
                self.identity_index,
                model_grant(b.d, b.s.dedupe_model, sid="InvokeDedupeModel"),
                self._note_refusal(contract.DEDUPE_FUNCTION),
                self.cache.grant_spend("model", sid="CountModelCalls"),
                put_events(b.d, "EmitDeduped", (contract.DEDUPED,)),
            ],
            contract.DedupeSettings.environment(b.values),
            events=(chain_stage(contract.DEDUPE_FUNCTION, self.source, self.dlq),),
            on_failure=self.dlq,
            async_max_retries=ASYNC_RETRIES,
            vendored=JELLYFISH,
        )

    def _filter(self, b: Build[LerSettings]) -> None:
        """Clean or junk."""
        b.function(
            contract.FILTER_FUNCTION,
            "Deterministic junk signals; the model only for borderline leads",
            [
                model_grant(b.d, b.s.filter_model, sid="InvokeFilterModel"),
                self._note_refusal(contract.FILTER_FUNCTION),
                self.cache.grant_spend("model", sid="CountModelCalls"),
                put_events(b.d, "EmitCleanOrJunk", (contract.CLEAN, contract.JUNK)),
            ],
            contract.FilterSettings.environment(b.values),
            events=(chain_stage(contract.FILTER_FUNCTION, self.source, self.dlq),),
            on_failure=self.dlq,
            async_max_retries=ASYNC_RETRIES,
        )

    def _push(self, b: Build[LerSettings]) -> None:
        """The CRM write and the identity index."""
        self.push = b.function(
            contract.PUSH_FUNCTION,
            "Final CRM check, create or link (fill empty fields only), records, identity",
            [
                self.crm_key.grant_read(),
                self.identity.grant_conditional_write(),
                dataclasses.replace(self.identity_index, sid="ReadIdentityByCrmIdForMerges"),
                self.records.grant(
                    "s3:PutObject", prefixes=(contract.RECORDS_PREFIX,), sid="WriteCleanRecord"
                ),
                self.cache.grant_degradation_items(
                    "dynamodb:UpdateItem",
                    [("CrmRejected", contract.PUSH_FUNCTION)],
                    sid="NoteCrmRefusal",
                ),
                # make verify's check lead: its arrival, and nothing else of the table.
                self.cache.grant_items_under(
                    "dynamodb:PutItem", contract.CHECK_ARRIVAL_PREFIX, sid="NoteCheckArrival"
                ),
                # A contact HubSpot deleted for good: its key rows go at once (found through the
                # crm_id index), the rest is erased by ler-backfill (crm_deletions.py).
                self.identity.grant("dynamodb:DeleteItem", sid="DropKeysOfDeletedContact"),
                Grant(
                    "HandDeletedContactToBackfill",
                    ("lambda:InvokeFunction",),
                    (b.d.arns.lambda_function(b.d.name(contract.BACKFILL_FUNCTION)),),
                ),
                *self._forgotten_check_grants(),
            ],
            contract.PushSettings.environment(b.values),
            events=(chain_stage(contract.PUSH_FUNCTION, self.source, self.dlq),),
            on_failure=self.dlq,
            async_max_retries=ASYNC_RETRIES,
            vendored=PHONENUMBERS + EMAIL_CHECK + JELLYFISH,
        )

    def _forgotten_check_grants(self) -> list[Grant]:
        """A lead of a person make forget erased, received before it, is dropped
        (handlers/lead_enricher/forgotten_leads.py): the salt, and the ``forgotten#`` rows of
        ler-identity alone."""
        return [
            self.forget_salt.grant_read(sid="ReadForgetSalt"),
            self.identity.grant_items_under("dynamodb:GetItem", FORGOTTEN_PREFIX, sid="ReadForgottenHashes"),
        ]

    def _erase_deleted_contact_grants(self) -> list[Grant]:
        """ler-backfill erases a contact HubSpot deleted for good with the engine make forget
        uses (handlers/lead_enricher/crm_deletions.py): it reads every identity row and every
        version of every object of ler's buckets, deletes what names the contact, and rewrites
        an upload's report without its rows."""
        grants = [self.identity.grant("dynamodb:Scan", "dynamodb:DeleteItem", sid="EraseIdentityOfDeleted")]
        for bucket, sid in ((self.raw, "Raw"), (self.records, "Records"), (self.junk, "Junk")):
            grants.append(Grant(f"List{sid}VersionsOfDeleted", ("s3:ListBucketVersions",), (bucket.arn,)))
            grants.append(
                bucket.grant("s3:GetObjectVersion", "s3:DeleteObjectVersion", sid=f"Erase{sid}OfDeleted")
            )
        grants.append(
            self.raw.grant("s3:PutObject", prefixes=(contract.REPORT_PREFIX,), sid="RewriteReportOfDeleted")
        )
        return grants

    def _junk_writer(self, b: Build[LerSettings]) -> None:
        """The junk log."""
        b.function(
            contract.JUNK_WRITER_FUNCTION,
            "Appends each dropped lead and its reason to ler-junk",
            [
                self.junk.grant("s3:PutObject", prefixes=(contract.JUNK_PREFIX,), sid="WriteJunkLog"),
                *self._forgotten_check_grants(),
            ],
            contract.JunkWriterSettings.environment(b.values),
            events=(chain_stage(contract.JUNK_WRITER_FUNCTION, self.source, self.dlq),),
            on_failure=self.dlq,
            async_max_retries=ASYNC_RETRIES,
            vendored=EMAIL_CHECK,  # the erased-person check normalises the lead's email
        )

    def _rescue(self, b: Build[LerSettings]) -> None:
        """The digest's rescue links: public, unlike ler-intake in iam mode (a person taps them)."""
        rescue = b.function(
            contract.RESCUE_FUNCTION,
            "Junk digest rescue links: confirm page, then the lead back on the intake queue",
            [
                self.rescue_key.grant_read(sid="ReadRescueLinkKey"),
                self.junk.grant("s3:GetObject", prefixes=(contract.JUNK_PREFIX,), sid="ReadDroppedLead"),
                # Only overwrites conditional on the version read (If-Match), so a rescue is
                # recorded once and never clobbers a write it did not see ("Enforce conditional
                # writes on Amazon S3 buckets", condition key s3:if-match,
                # https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes-enforce.html).
                dataclasses.replace(
                    self.junk.grant("s3:PutObject", prefixes=(contract.JUNK_PREFIX,), sid="RecordRescueOnce"),
                    conditions={"Null": {"s3:if-match": "false"}},
                ),
                self.intake_queue.grant_send(sid="SendRescuedLeadBack"),
            ],
            contract.RescueSettings.environment(b.values),
            url=FunctionUrl(
                "NONE", public_reason="HMAC-signed, expiring, single-use rescue token checked before any read"
            ),
        )
        assert rescue.function_url is not None
        self.rescue_url = rescue.function_url
        # A URL, not a secret: the Output resolves at deploy time (as upsr's add link).
        b.values["rescue_url"] = cast(str, rescue.function_url)

    def _retry(self, b: Build[LerSettings]) -> None:
        """Scheduled: re-drive dead letters and pending enrichments."""
        intake_dlq = self.intake_queue.dlq_arn
        assert intake_dlq is not None  # the intake queue is declared with its own DLQ
        b.function(
            contract.RETRY_FUNCTION,
            "Re-drives ler-dlq and the intake dead letters, retries pending enrichments",
            [
                self.dlq.grant_consume(sid="DrainLerDlq"),
                Grant("DrainIntakeDeadLetters", CONSUME_ACTIONS, (intake_dlq,)),
                self.intake_queue.grant_send(sid="RedriveToIntakeQueue"),
                put_events(b.d, "RedrivePipelineEvents", contract.PIPELINE_EVENTS),
                invoke("RedriveMailAndUploadsToIntake", self.intake),
                self.cache.grant("dynamodb:Scan", sid="FindPendingEnrichments"),
                b.d.grant_send_email("AlertDeadLetters", b.s.sender_email),
            ],
            contract.RetrySettings.environment(b.values),
            schedules=(
                Schedule(
                    contract.RETRY_FUNCTION,
                    b.s.retry_schedule,
                    "Re-drive dead letters and pending enrichments",
                    json.dumps({"job": contract.RETRY_FUNCTION}),
                    b.s.schedule_timezone,
                ),
            ),
            on_failure=self.dlq,
            async_max_retries=ASYNC_RETRIES,
        )

    def _backfill(self, b: Build[LerSettings]) -> None:
        """Scheduled: re-enrichment and identity re-sync."""
        b.function(
            contract.BACKFILL_FUNCTION,
            "Re-enriches pending leads; re-syncs ler-identity from the CRM export via ler-push",
            [
                self.cache.grant("dynamodb:Scan", sid="FindPendingEnrichments"),
                put_events(b.d, "ReEnrichPending", (contract.NORMALIZED,)),
                invoke("ResyncIdentityThroughPush", self.push),
                *self._erase_deleted_contact_grants(),
            ],
            contract.BackfillSettings.environment(b.values),
            schedules=(
                Schedule(
                    contract.BACKFILL_FUNCTION,
                    b.s.backfill_schedule,
                    "Nightly re-enrichment and identity re-sync",
                    json.dumps({"job": contract.BACKFILL_FUNCTION}),
                    b.s.schedule_timezone,
                ),
            ),
            on_failure=self.dlq,
            async_max_retries=ASYNC_RETRIES,
            vendored=PHONENUMBERS + EMAIL_CHECK,  # the erasure engine's phone and email rules
        )

    def _digest(self, b: Build[LerSettings]) -> None:
        """Scheduled: the daily junk digest."""
        b.function(
            contract.DIGEST_FUNCTION,
            "Emails the previous day's junk drops by reason",
            [
                dataclasses.replace(
                    self.junk.grant_list(sid="ListJunkLog"),
                    conditions={"StringLike": {"s3:prefix": [f"{contract.JUNK_PREFIX}*"]}},
                ),
                self.junk.grant("s3:GetObject", prefixes=(contract.JUNK_PREFIX,), sid="ReadJunkLog"),
                self.rescue_key.grant_read(sid="SignRescueLinks"),
                b.d.grant_send_email("SendJunkDigest", b.s.sender_email),
                self.cache.grant_degradation_items(
                    "dynamodb:GetItem",
                    list(contract.DEGRADABLE),
                    sid="ReadDegradationNotes",
                ),
            ],
            contract.DigestSettings.environment(b.values),
            schedules=(
                Schedule(
                    contract.DIGEST_FUNCTION,
                    b.s.digest_schedule,
                    "Daily junk digest",
                    json.dumps({"job": contract.DIGEST_FUNCTION}),
                    b.s.schedule_timezone,
                ),
            ),
            on_failure=self.dlq,
            async_max_retries=ASYNC_RETRIES,
        )

    def _outputs(self, d: Deployment, s: LerSettings) -> None:
        """The operator-facing outputs."""
        self.finish(
            {
                "intake_url": self.intake.function_url,
                "rescue_url": self.rescue_url,
                "intake_auth": s.intake_auth,
                "intake_secret": self.intake_secret.physical_name if self.intake_secret else None,
                "raw_bucket": self.raw.bucket_name,
                "upload_prefix": contract.UPLOAD_PREFIX,
                "records_bucket": self.records.bucket_name,
                "junk_bucket": self.junk.bucket_name,
                "identity_table": self.identity.table_name,
                "enrich_cache_table": self.cache.table_name,
                "intake_queue_url": self.intake_queue.queue_url,
                "dlq_url": self.dlq.queue_url,
                "inbound_rule_set": d.name("ler-inbound"),
                "secrets": [
                    slot.physical_name
                    for slot in (self.enrichment_key, self.crm_key, self.intake_secret, self.rescue_key)
                    if slot is not None
                ],
            }
        )
