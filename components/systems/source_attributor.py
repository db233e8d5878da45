"""Lead source attributor (document 002): capture, stitch, report. No model anywhere.

Three functions, each with its own role; only ls-capture is public:

- ``ls-capture`` (Function URL, auth NONE, CORS limited to the site origins): records touches
  and enquiries. Authenticity on this surface is the origin allowlist plus the bot filter,
  checked in the function.
- ``ls-stitch`` (DynamoDB stream on enquiries, INSERT only, partial batch failures, bounded
  retries, on-failure queue ``ls-stitch-failures``): links identities to visitors' touches.
- ``ls-report`` (Function URL, auth AWS_IAM): the attribution report, by Query only; when
  ``reportRecipient`` is set, a weekly schedule also has it mail last week's report (SES).

Each function's grants are the code below; the README's generated table for ls lists them.

Tables: ``ls-touches`` (visitor_id, at; TTL), ``ls-identities`` (identity_key, visitor_id) and
``ls-enquiries`` (month, enquiry_id; stream NEW_IMAGE). The enquiries key is a month bucket
and a per-submission id: the report, which may only Query, reads a date range as one Query
per month, and a retried submission hits the same key so its conditional put is a no-op.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi

from components.config import LsSettings
from components.deployment import Deployment
from components.guarded_table import GuardedTable, GuardedTableArgs
from components.scheduled_job import Schedule
from components.scoped_lambda import FunctionUrl, ScopedLambda, StreamTrigger
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import System, SystemArgs
from components.systems.function_factory import FunctionFactory
from components.work_queue import WorkQueue, WorkQueueArgs
from handlers.source_attributor import contract

PACKAGE = "handlers.source_attributor"
SIZES: dict[str, tuple[int, int]] = {
    contract.CAPTURE: (512, 5),
    contract.STITCH: (1024, 60),
    contract.REPORT: (1024, 120),
}
"""Memory (MB) and timeout (s) per function, from the document."""
STITCH_MAX_RETRIES = 3
"""Stream retries before a failing enquiry record goes to ls-stitch-failures."""
STITCH_BATCH_SIZE = 10


class SourceAttributor(System):
    """The lead source attributor: three functions, three tables, one key, one failure queue."""

    touches: GuardedTable
    identities: GuardedTable
    enquiries: GuardedTable
    failures: WorkQueue
    email_key: SecretSlot
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
        d, s = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)
        self._data(d, child)
        self._secrets(d, child)
        values = self._environment(s)
        function = FunctionFactory(d, PACKAGE, SIZES, child)
        self._capture(s, function, values)
        self._stitch(function, values)
        self._report(d, s, function, values)
        self._outputs()

    def _data(self, d: Deployment, child: pulumi.ResourceOptions) -> None:
        """The three tables as the contract declares them, and stitch's failure queue."""
        self.touches, self.identities, self.enquiries = (
            GuardedTable(spec.name, GuardedTableArgs.of(d, spec), child)
            for spec in (contract.TOUCHES, contract.IDENTITIES, contract.ENQUIRIES)
        )
        self.failures = WorkQueue(
            contract.STITCH_FAILURES,
            WorkQueueArgs(d, contract.STITCH_FAILURES, dead_letter=True),
            child,
        )

    def _secrets(self, d: Deployment, child: pulumi.ResourceOptions) -> None:
        """The key of the keyed email hash."""
        self.email_key = SecretSlot(
            contract.EMAIL_HASH_KEY,
            SecretSlotArgs(
                d,
                contract.EMAIL_HASH_KEY,
                "Key of the keyed email hash (HMAC-SHA256) on enquiries: at least 32 random "
                "characters, set once by the operator; changing it stops old and new enquiries "
                "of one person from stitching together.",
            ),
            child,
        )

    def _environment(self, s: LsSettings) -> dict[str, Any]:
        """Every value the three functions' settings read (each takes its own subset)."""
        return {
            "touches_table": self.touches.physical_name,
            "identities_table": self.identities.physical_name,
            "enquiries_table": self.enquiries.physical_name,
            "email_hash_secret": self.email_key.physical_name,
            "site_origins": ",".join(s.site_origins),
            "touch_ttl_days": s.touch_ttl_days,
            "report_cache_seconds": s.report_cache_seconds,
            "sender_email": s.sender_email,
            "report_recipient": s.report_recipient,
        }

    def _capture(self, s: LsSettings, function: FunctionFactory, values: dict[str, Any]) -> None:
        self.capture = function(
            contract.CAPTURE,
            "Beacon: normalises the source, writes one touch, sets the first-party id",
            (
                self.touches.grant("dynamodb:PutItem", sid="PutTouches"),
                self.enquiries.grant("dynamodb:PutItem", sid="PutEnquiries"),
                self.email_key.grant_read(sid="ReadEmailHashKey"),
            ),
            contract.CaptureSettings.environment(values),
            url=FunctionUrl(
                "NONE",
                public_reason=(
                    "site beacon: Origin must be one of the configured site origins and "
                    "known bots are dropped, both checked before the body is read; it can "
                    "only create touches and enquiries"
                ),
                cors_origins=tuple(s.site_origins),
                cors_methods=("POST",),
            ),
            vendored=("email-validator", "idna"),
        )

    def _stitch(self, function: FunctionFactory, values: dict[str, Any]) -> None:
        self.stitch = function(
            contract.STITCH,
            "Links visitor ids that share an email hash into one identity, additively",
            (
                self.touches.grant("dynamodb:Query", sid="QueryTouches"),
                self.identities.grant(
                    "dynamodb:Query", "dynamodb:UpdateItem", sid="LinkIdentities"
                ),
            ),
            contract.StitchSettings.environment(values),
            streams=(
                StreamTrigger(
                    self.enquiries,
                    on_failure=self.failures,
                    batch_size=STITCH_BATCH_SIZE,
                    max_retries=STITCH_MAX_RETRIES,
                    filter_patterns=({"eventName": ["INSERT"]},),
                ),
            ),
        )

    def _report(
        self, d: Deployment, s: LsSettings, function: FunctionFactory, values: dict[str, Any]
    ) -> None:
        self.report = function(
            contract.REPORT,
            "Walks paths, applies both rules, computes the unattributed share",
            (
                self.touches.grant("dynamodb:Query", sid="QueryTouches"),
                self.identities.grant("dynamodb:Query", sid="QueryIdentities"),
                self.enquiries.grant("dynamodb:Query", sid="QueryEnquiries"),
                *(
                    (d.grant_send_email("SendOwnerReport", s.sender_email),)
                    if s.sender_email
                    else ()
                ),
            ),
            contract.ReportSettings.environment(values),
            url=FunctionUrl("AWS_IAM"),
            schedules=(
                Schedule(
                    contract.REPORT,
                    s.report_schedule,
                    "Weekly attribution report mailed to the owner",
                    json.dumps({"job": contract.REPORT}),
                    s.report_timezone,
                ),
            )
            if s.mails_report
            else (),
        )

    def _outputs(self) -> None:
        """The operator-facing outputs."""
        self.finish(
            {
                "capture_url": self.capture.function_url,
                "report_url": self.report.function_url,
                "touches_table": self.touches.physical_name,
                "identities_table": self.identities.physical_name,
                "enquiries_table": self.enquiries.physical_name,
                "email_hash_secret": self.email_key.physical_name,
                "stitch_failures_queue": self.failures.physical_name,
            }
        )
