"""Names the infrastructure and the handlers of the lead source attributor agree on.

``components/systems/source_attributor.py`` declares its tables, secret and queue from these
records and builds each function's environment from its settings record, so a renamed table or
a new setting changes the infra, the handler and the tests together. No Pulumi here: this
module ships in the function archives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from handlers.common.settings import Settings
from handlers.common.tables import Key, TableSpec

CAPTURE: Final = "ls-capture"
STITCH: Final = "ls-stitch"
REPORT: Final = "ls-report"
REPORT_PAGE: Final = "ls-report-page"

TOUCH_TTL: Final = "ttl"
"""TTL attribute of ls-touches: when a touch expires (epoch seconds)."""
TOUCHES: Final = TableSpec("ls-touches", Key("visitor_id"), Key("at"), ttl_attribute=TOUCH_TTL)
"""One row per arrival (and per answered "how did you hear"), kept for the touch TTL."""
IDENTITIES: Final = TableSpec(
    "ls-identities", Key("identity_key"), Key("visitor_id"), ttl_attribute=TOUCH_TTL
)
"""One row per (keyed email hash, device) that stitching linked; it expires with the latest
enquiry that linked it (``ttl``)."""
ENQUIRIES: Final = TableSpec(
    "ls-enquiries", Key("month"), Key("enquiry_id"), ttl_attribute=TOUCH_TTL, stream="NEW_IMAGE"
)
"""One row per form submission, in month buckets (the report Queries a range month by month);
its stream feeds ls-stitch. It expires like a touch (``ttl``, ``touch_ttl_days``)."""
REPORT_TTL: Final = "ttl"
"""TTL attribute of ls-reports: the last link's expiry (epoch seconds)."""
REPORTS: Final = TableSpec("ls-reports", Key("period"), Key("item"), ttl_attribute=REPORT_TTL)
"""Per mailed period (``report_link.subject``): the stored owner report (item ``report``) and
its link's view count (item ``views``), so a view of the page costs one read
(``stored_report``)."""

EMAIL_HASH_KEY: Final = "ls-email-hash-key"
"""The secret holding the key of the keyed email hash."""
REPORT_LINK_KEY: Final = "ls-report-link-key"
"""The keyring signing the weekly mail's link to the report page (ls-report signs, ls-report-page
verifies)."""
STITCH_FAILURES: Final = "ls-stitch-failures"
"""ls-stitch's on-failure queue: stream records that failed every retry."""


@dataclass(frozen=True)
class CaptureSettings(Settings):
    """ls-capture's environment."""

    touches_table: str
    enquiries_table: str
    email_hash_secret: str
    """The email-hash key secret's name (never its value)."""
    site_origins: str
    """Comma-separated origins whose pages may send beacons."""
    touch_ttl_days: int

    def origins(self) -> frozenset[str]:
        """The allowed origins as a set."""
        return frozenset(o.strip() for o in self.site_origins.split(",") if o.strip())


@dataclass(frozen=True)
class StitchSettings(Settings):
    """ls-stitch's environment."""

    touches_table: str
    identities_table: str


@dataclass(frozen=True)
class ReportSettings(Settings):
    """ls-report's environment."""

    touches_table: str
    identities_table: str
    enquiries_table: str
    report_cache_seconds: int
    sender_email: str | None
    """From address of the weekly owner mail; absent when the stack sends none."""
    report_recipient: str | None
    """Who receives the weekly owner mail; absent when the stack sends none."""
    report_page_url: str | None
    """ls-report-page's Function URL, the base of the mail's signed link; absent with no mail."""
    report_link_key_secret: str | None
    """The link keyring secret's name (never its value); absent with no mail."""
    report_link_days: int
    """How long the mail's link to the report page works, in days."""
    reports_table: str | None
    """ls-reports, where the mailed report is stored for its page; absent with no mail."""


@dataclass(frozen=True)
class ReportPageSettings(Settings):
    """ls-report-page's environment: the stored reports, the three tables (Query only, for a
    period stored nowhere yet) and the link keyring."""

    touches_table: str
    identities_table: str
    enquiries_table: str
    reports_table: str
    report_link_key_secret: str
    """The link keyring secret's name (never its value)."""
    report_link_views: int
    """Views one period's link answers before it is refused (429)."""
