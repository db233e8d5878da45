"""Lead source attributor (document 002): capture, stitch, report. No model anywhere.

Three functions, each with its own role; only ls-capture is public:

- ``ls-capture`` (Function URL, auth NONE, CORS limited to the site origins; 5 s / 512 MB):
  PutItem on touches and enquiries, GetSecretValue on the email-hash key. Authenticity on
  this surface is the origin allowlist plus the bot filter, checked in the function.
- ``ls-stitch`` (DynamoDB stream on enquiries, INSERT only, partial batch failures, bounded
  retries, on-failure queue ``ls-stitch-failures``; 60 s / 1024 MB): Query on touches,
  Query and UpdateItem on identities.
- ``ls-report`` (Function URL, auth AWS_IAM; 120 s / 1024 MB): Query on the three tables.

Tables: ``ls-touches`` (visitor_id, at; TTL), ``ls-identities`` (identity_key, visitor_id) and
``ls-enquiries`` (month, enquiry_id; stream NEW_IMAGE). The enquiries key is a month bucket
and a per-submission id: the report, which may only Query, reads a date range as one Query
per month, and a retried submission hits the same key so its conditional put is a no-op.
"""

from __future__ import annotations

import pulumi

from components.config import LsSettings
from components.guarded_table import GuardedTable, GuardedTableArgs, Key
from components.scoped_lambda import (
    FunctionCode,
    FunctionUrl,
    ScopedLambda,
    ScopedLambdaArgs,
    StreamTrigger,
)
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import System, SystemArgs
from components.work_queue import WorkQueue, WorkQueueArgs

PACKAGE = "handlers.source_attributor"
STITCH_MAX_RETRIES = 3
"""Stream retries before a failing enquiry record goes to ls-stitch-failures."""
STITCH_BATCH_SIZE = 10


class SourceAttributor(System):
    """The lead source attributor: three functions, three tables, one key, one failure queue."""

    touches: GuardedTable
    identities: GuardedTable
    enquiries: GuardedTable
    capture: ScopedLambda
    stitch: ScopedLambda
    report: ScopedLambda

    def __init__(
        self,
        resource_name: str,
        args: SystemArgs[LsSettings],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("SourceAttributor", resource_name, opts)
        d, settings = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)

        self.touches = GuardedTable(
            "ls-touches",
            GuardedTableArgs(d, "ls-touches", Key("visitor_id"), Key("at"), ttl_attribute="ttl"),
            child,
        )
        self.identities = GuardedTable(
            "ls-identities",
            GuardedTableArgs(d, "ls-identities", Key("identity_key"), Key("visitor_id")),
            child,
        )
        self.enquiries = GuardedTable(
            "ls-enquiries",
            GuardedTableArgs(
                d, "ls-enquiries", Key("month"), Key("enquiry_id"), stream="NEW_IMAGE"
            ),
            child,
        )
        failures = WorkQueue(
            "ls-stitch-failures",
            WorkQueueArgs(d, "ls-stitch-failures", dead_letter=True),
            child,
        )
        email_key = SecretSlot(
            "ls-email-hash-key",
            SecretSlotArgs(
                d,
                "ls-email-hash-key",
                "Key of the keyed email hash (HMAC-SHA256) on enquiries: at least 32 random "
                "characters, set once by the operator; changing it stops old and new enquiries "
                "of one person from stitching together.",
            ),
            child,
        )
        tables = {
            "TOUCHES_TABLE": self.touches.physical_name,
            "IDENTITIES_TABLE": self.identities.physical_name,
            "ENQUIRIES_TABLE": self.enquiries.physical_name,
        }

        self.capture = ScopedLambda(
            "ls-capture",
            ScopedLambdaArgs(
                d,
                "ls-capture",
                "Beacon: normalises the source, writes one touch, sets the first-party id",
                FunctionCode(f"{PACKAGE}.capture.handler", vendored=("email-validator", "idna")),
                memory_mb=512,
                timeout_s=5,
                grants=(
                    self.touches.grant("dynamodb:PutItem", sid="PutTouches"),
                    self.enquiries.grant("dynamodb:PutItem", sid="PutEnquiries"),
                    email_key.grant_read(sid="ReadEmailHashKey"),
                ),
                environment={
                    "TOUCHES_TABLE": self.touches.physical_name,
                    "ENQUIRIES_TABLE": self.enquiries.physical_name,
                    "EMAIL_HASH_SECRET": email_key.physical_name,
                    "SITE_ORIGINS": ",".join(settings.site_origins),
                    "TOUCH_TTL_DAYS": str(settings.touch_ttl_days),
                },
                url=FunctionUrl(
                    "NONE",
                    public_reason=(
                        "site beacon: Origin must be one of the configured site origins and "
                        "known bots are dropped, both checked before the body is read; it can "
                        "only create touches and enquiries"
                    ),
                    cors_origins=tuple(settings.site_origins),
                    cors_methods=("POST",),
                ),
            ),
            child,
        )
        self.stitch = ScopedLambda(
            "ls-stitch",
            ScopedLambdaArgs(
                d,
                "ls-stitch",
                "Links visitor ids that share an email hash into one identity, additively",
                FunctionCode(f"{PACKAGE}.stitch.handler"),
                memory_mb=1024,
                timeout_s=60,
                grants=(
                    self.touches.grant("dynamodb:Query", sid="QueryTouches"),
                    self.identities.grant(
                        "dynamodb:Query", "dynamodb:UpdateItem", sid="LinkIdentities"
                    ),
                ),
                environment={
                    "TOUCHES_TABLE": self.touches.physical_name,
                    "IDENTITIES_TABLE": self.identities.physical_name,
                },
                stream_triggers=(
                    StreamTrigger(
                        self.enquiries,
                        on_failure=failures,
                        batch_size=STITCH_BATCH_SIZE,
                        max_retries=STITCH_MAX_RETRIES,
                        filter_patterns=({"eventName": ["INSERT"]},),
                    ),
                ),
            ),
            child,
        )
        self.report = ScopedLambda(
            "ls-report",
            ScopedLambdaArgs(
                d,
                "ls-report",
                "Walks paths, applies both rules, computes the unattributed share",
                FunctionCode(f"{PACKAGE}.report.handler"),
                memory_mb=1024,
                timeout_s=120,
                grants=(
                    self.touches.grant("dynamodb:Query", sid="QueryTouches"),
                    self.identities.grant("dynamodb:Query", sid="QueryIdentities"),
                    self.enquiries.grant("dynamodb:Query", sid="QueryEnquiries"),
                ),
                environment={
                    **tables,
                    "REPORT_CACHE_SECONDS": str(settings.report_cache_seconds),
                },
                url=FunctionUrl("AWS_IAM"),
            ),
            child,
        )
        self.finish(
            {
                "capture_url": self.capture.function_url,
                "report_url": self.report.function_url,
                "touches_table": self.touches.physical_name,
                "identities_table": self.identities.physical_name,
                "enquiries_table": self.enquiries.physical_name,
                "email_hash_secret": email_key.physical_name,
                "stitch_failures_queue": failures.physical_name,
            }
        )
