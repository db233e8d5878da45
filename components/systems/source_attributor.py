"""Lead source attributor (document 002): capture, stitch, report. No model anywhere.

Three functions, each with its own role, and a fourth when the report is mailed; two are public:

- ``ls-capture`` (Function URL, auth NONE, CORS limited to the site origins): records touches
  and enquiries. Authenticity on this surface is the origin allowlist plus the bot filter,
  checked in the function.
- ``ls-stitch`` (DynamoDB stream on enquiries, INSERT only, partial batch failures, bounded
  retries, on-failure queue ``ls-stitch-failures``): links identities to visitors' touches.
- ``ls-report`` (Function URL, auth AWS_IAM): the attribution report, by Query only; when
  ``reportRecipient`` is set, a weekly schedule also has it mail last week's report (SES) with
  a signed link to the same report as a page.
- ``ls-report-page`` (Function URL, auth NONE; only when the report is mailed): the mail's link.
  The link token is verified before any table is read; a view is counted and answered from the
  report ls-report stored when it mailed (``ls-reports``); it may Query the three tables only
  for a period stored nowhere, and read its link keyring, ``ls-report-link-key`` (which
  ls-report reads to sign).

Each function's grants are the code below; docs/systems/ls.md's generated table lists them.

Tables: ``ls-touches`` (visitor_id, at; TTL), ``ls-identities`` (identity_key, visitor_id) and
``ls-enquiries`` (month, enquiry_id; stream NEW_IMAGE). The enquiries key is a month bucket
and a per-submission id: the report, which may only Query, reads a date range as one Query
per month, and a retried submission hits the same key so its conditional put is a no-op.
"""

from __future__ import annotations

import json
from typing import cast

import pulumi

from components.config import LsSettings
from components.deployment import Deployment
from components.grants import Grant
from components.guarded_table import GuardedTable, GuardedTableArgs
from components.personal_data import (
    SCHEDULE_EVENTS,
    NoPersonalData,
    PersonalData,
    Retention,
    function_logs,
    messages,
)
from components.scheduled_job import Schedule
from components.scoped_lambda import FunctionUrl, ScopedLambda, StreamTrigger
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import Build, System, SystemArgs, settings_values
from components.systems.function_factory import FunctionFactory
from components.work_queue import WorkQueue, WorkQueueArgs
from handlers.source_attributor import contract

PACKAGE = "handlers.source_attributor"
SIZES: dict[str, tuple[int, int]] = {
    contract.CAPTURE: (512, 5),
    contract.STITCH: (1024, 60),
    contract.REPORT: (1024, 120),
    contract.REPORT_PAGE: (1024, 30),  # one week's report, the same Queries as ls-report's
}
"""Memory (MB) and timeout (s) per function, from the document."""
STITCH_MAX_RETRIES = 3
"""Stream retries before a failing enquiry record goes to ls-stitch-failures."""
STITCH_BATCH_SIZE = 10

Environment = dict[str, str | int | None]
"""Every function's environment, by settings field (each record picks its own)."""


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
    report_page: ScopedLambda | None
    """The mail's signed link to the report page; None when no mail is sent."""
    reports: GuardedTable | None
    """The mailed reports and their views, for the page; None when no mail is sent."""

    def __init__(
        self,
        resource_name: str,
        args: SystemArgs[LsSettings],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("SourceAttributor", resource_name, opts)
        d, settings = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)
        self._data(d, settings, child)
        values = self._environment(settings)
        function = FunctionFactory(
            d,
            PACKAGE,
            SIZES,
            child,
            logs=function_logs("visitor ids", "enquiry ids"),
            failed_events=SCHEDULE_EVENTS,
        )
        b = Build(d, settings, function, values)
        self._capture(b)
        self._stitch(b)
        reads = (
            self.touches.grant("dynamodb:Query", sid="QueryTouches"),
            self.identities.grant("dynamodb:Query", sid="QueryIdentities"),
            self.enquiries.grant("dynamodb:Query", sid="QueryEnquiries"),
        )
        mail = self._report_page(b, reads, child)
        self._report(b, (*reads, *mail))
        self._outputs()

    def _data(self, d: Deployment, s: LsSettings, child: pulumi.ResourceOptions) -> None:
        """The three tables, the stitch failure queue and the email hash key."""
        # A touch, the identity linking it and the enquiry it is credited to end together.
        window = Retention.setting(
            "ls", s, "touch_ttl_days", "the attribution look-back: a year and a half of visits"
        )
        held = {
            contract.TOUCHES: PersonalData(
                ("visitor ids (a first-party cookie)", "landing paths", "referrer hosts", "campaigns"),
                "each visit's source, which an enquiry is credited to",
                window,
            ),
            contract.IDENTITIES: PersonalData(
                ("keyed hashes of email addresses", "visitor ids", "enquiry ids"),
                "the devices one person enquired from, so their visits count together",
                window,
            ),
            contract.ENQUIRIES: PersonalData(
                ("keyed hashes of email addresses", "visitor ids", "'how did you hear' answers", "landing paths"),
                "the enquiries the report credits to sources",
                window,
            ),
        }
        self.touches, self.identities, self.enquiries = (
            GuardedTable(spec.name, GuardedTableArgs.of(d, spec, held[spec]), child)
            for spec in (contract.TOUCHES, contract.IDENTITIES, contract.ENQUIRIES)
        )
        self.failures = WorkQueue(
            contract.STITCH_FAILURES,
            WorkQueueArgs(
                d,
                contract.STITCH_FAILURES,
                dead_letter=True,
                personal_data=messages(
                    "keyed hashes of email addresses", "visitor ids", "'how did you hear' answers",
                    why="an enquiry's stream record ls-stitch failed on",
                ),
            ),
            child,
        )
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

    def _environment(self, settings: LsSettings) -> Environment:
        """The report page's URL and key are filled in by ``_report_page`` when it exists."""
        return {
            **settings_values(settings),
            "touches_table": self.touches.physical_name,
            "identities_table": self.identities.physical_name,
            "enquiries_table": self.enquiries.physical_name,
            "email_hash_secret": self.email_key.physical_name,
            "site_origins": ",".join(settings.site_origins),
            "reports_table": None,
            "report_page_url": None,
            "report_link_key_secret": None,
        }

    def _capture(self, b: Build[LsSettings]) -> None:
        """The site beacon: public, origin-checked, create-only."""
        self.capture = b.function(
            contract.CAPTURE,
            "Beacon: normalises the source, writes one touch, sets the first-party id",
            (
                self.touches.grant("dynamodb:PutItem", sid="PutTouches"),
                self.enquiries.grant("dynamodb:PutItem", sid="PutEnquiries"),
                self.email_key.grant_read(sid="ReadEmailHashKey"),
            ),
            contract.CaptureSettings.environment(b.values),
            url=FunctionUrl(
                "NONE",
                public_reason=(
                    "site beacon: Origin must be one of the configured site origins and "
                    "known bots are dropped, both checked before the body is read; it can "
                    "only create touches and enquiries"
                ),
                cors_origins=tuple(b.s.site_origins),
                cors_methods=("POST",),
                registered_in="the site: the beacon snippet on every page",
            ),
            vendored=("email-validator", "idna"),
        )

    def _stitch(self, b: Build[LsSettings]) -> None:
        """Identities from the enquiries stream, additively."""
        self.stitch = b.function(
            contract.STITCH,
            "Links visitor ids that share an email hash into one identity, additively",
            (
                self.touches.grant("dynamodb:Query", sid="QueryTouches"),
                self.identities.grant(
                    "dynamodb:Query", "dynamodb:UpdateItem", sid="LinkIdentities"
                ),
            ),
            contract.StitchSettings.environment(b.values),
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

    def _report_page(
        self, b: Build[LsSettings], reads: tuple[Grant, ...], child: pulumi.ResourceOptions
    ) -> tuple[Grant, ...]:
        """Only when the report is mailed: the link key and the page it opens. Returns what
        ls-report needs besides the reads to mail (send as the sender, sign with the key)."""
        self.report_page = self.reports = None
        if not (b.s.mails_report and b.s.sender_email):
            return ()
        self.reports = GuardedTable(
            contract.REPORTS.name,
            GuardedTableArgs.of(
                b.d,
                contract.REPORTS,
                NoPersonalData("the mailed weekly reports: counts per source, and their link views"),
            ),
            child,
        )
        b.values["reports_table"] = self.reports.physical_name
        link_key = SecretSlot(
            contract.REPORT_LINK_KEY,
            SecretSlotArgs(
                b.d,
                contract.REPORT_LINK_KEY,
                "Keyring signing the weekly report mail's link to the report page: JSON "
                '{"active_kid": "k1", "keys": {"k1": "<at least 32 random characters>"}}.',
            ),
            child,
        )
        b.values["report_link_key_secret"] = link_key.physical_name
        self.report_page = b.function(
            contract.REPORT_PAGE,
            "The weekly mail's signed link: that week's report as a read-only page",
            (
                *reads,
                self.reports.grant(
                    "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem",
                    sid="ServeStoredReports",
                ),
                link_key.grant_read(sid="ReadReportLinkKey"),
            ),
            contract.ReportPageSettings.environment(b.values),
            url=FunctionUrl(
                "NONE",
                public_reason=(
                    "signed report link: an HMAC link token naming one week, expiring, "
                    "is verified before any table is read; GET only; a view counts itself "
                    "against the link's view limit and reads the stored report"
                ),
            ),
        )
        assert self.report_page.function_url is not None
        # A URL, not a secret: the Output resolves at deploy time (as upsr's addlink_url).
        b.values["report_page_url"] = cast(str, self.report_page.function_url)
        return (
            b.d.grant_send_email("SendOwnerReport", b.s.sender_email),
            link_key.grant_read(sid="SignReportLinks"),
            self.reports.grant("dynamodb:PutItem", sid="StoreMailedReports"),
        )

    def _report(self, b: Build[LsSettings], grants: tuple[Grant, ...]) -> None:
        """The report for programs (IAM URL) and, when mailed, its weekly schedule."""
        self.report = b.function(
            contract.REPORT,
            "Walks paths, applies both rules, computes the unattributed share",
            grants,
            contract.ReportSettings.environment(b.values),
            url=FunctionUrl("AWS_IAM", registered_in="the programs that call the report with SigV4"),
            schedules=(
                Schedule(
                    contract.REPORT,
                    b.s.report_schedule,
                    "Weekly attribution report mailed to the owner",
                    json.dumps({"job": contract.REPORT}),
                    b.s.report_timezone,
                ),
            )
            if b.s.mails_report
            else (),
        )

    def _outputs(self) -> None:
        """The operator-facing outputs."""
        self.finish(
            {
                "capture_url": self.capture.function_url,
                "report_url": self.report.function_url,
                **(
                    {"report_page_url": self.report_page.function_url}
                    if self.report_page is not None
                    else {}
                ),
                "touches_table": self.touches.physical_name,
                "identities_table": self.identities.physical_name,
                "enquiries_table": self.enquiries.physical_name,
                "email_hash_secret": self.email_key.physical_name,
                "stitch_failures_queue": self.failures.physical_name,
            }
        )
