"""Stack configuration: one pydantic schema, validated before any resource is declared.

Every key lives under the project namespace ``crm-automations:`` in ``Pulumi.<stack>.yaml``.
A wrong value stops the program with one line per problem that names the file, line and column
(``components/config_source.py``), the key and what is allowed, and never the value given: a
value under the wrong key is often a pasted secret. An unknown key is refused the same way (with
the nearest known key), so a typo never silently falls back to a default. Per-system sections carry their own settings classes below.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
import types
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin
from zoneinfo import available_timezones

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from components import aws_regions, schedule_expression
from components.config_problems import PROJECT as PROJECT  # re-exported, as the two below
from components.config_problems import ConfigError as ConfigError
from components.config_problems import Problem as Problem
from components.config_source import located
from handlers.common import api_versions
from handlers.common.emails import is_email
from handlers.duplicate_merger.contract import FULL_READ_EVERY_WEEKS, SPLIT_ABOVE

HAIKU_GLOBAL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
SONNET_GLOBAL = "global.anthropic.claude-sonnet-4-6"

_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
_MODEL_ID = re.compile(r"^((global|us|eu|apac|jp|au)\.)?[a-z0-9-]+\.[A-Za-z0-9.:-]+$")
_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d+)?$")
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def _matches(pattern: re.Pattern[str], what: str) -> Any:
    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"not {what}")
        return value

    return AfterValidator(check)


def _known_region(value: str) -> str:
    if not aws_regions.is_region(value):
        raise ValueError("not a region in botocore's partition data")
    return value


def _schedule(value: str) -> str:
    try:
        return schedule_expression.check(value)
    except schedule_expression.ScheduleExpressionError as err:
        raise ValueError(
            f"not an EventBridge Scheduler expression: {err} "
            f"(see {schedule_expression.PAGE})"
        ) from None


def _time_zone(value: str) -> str:
    # Scheduler reads schedules in IANA zones; handlers read local times with zoneinfo (tzdata).
    if value not in _zones():
        raise ValueError("not an IANA time zone such as Europe/London or UTC")
    return value


@cache
def _zones() -> frozenset[str]:
    return frozenset(available_timezones())


Region = Annotated[
    str,
    _matches(_REGION, "an AWS region such as eu-west-2"),
    AfterValidator(_known_region),
]

def _email(value: str) -> str:
    # The handlers' one email check (email-validator, syntax only), so config and code agree.
    if not is_email(value):
        raise ValueError("not an email address")
    return value


Email = Annotated[str, AfterValidator(_email)]
ScheduleExpression = Annotated[str, AfterValidator(_schedule)]
"""An EventBridge Scheduler expression: rate(...), cron(...) or at(...), by Scheduler's grammar."""
TimeZone = Annotated[str, AfterValidator(_time_zone)]
"""An IANA time zone name, checked with zoneinfo."""
QuietReport = Literal["line", "none"]
"""An owner mail on a day with nothing to say (handlers/common/quiet.py): `line` once a week, `none` never."""

# How the config reference (docs/configuration.md) names the checked string kinds (components/config_reference).
CHECKED_KINDS: dict[Any, str] = {
    _schedule: "Scheduler expression",
    _time_zone: "IANA time zone",
    _known_region: "AWS region",
}
ModelId = Annotated[
    str, _matches(_MODEL_ID, "a Bedrock model or inference profile id such as " + HAIKU_GLOBAL)
]
Origin = Annotated[str, _matches(_ORIGIN, "an origin such as https://www.example.com")]
ClockTime = Annotated[str, _matches(_HHMM, "a 24-hour time HH:MM")]


def _published_hubspot_version(value: str) -> str:
    if value not in api_versions.HUBSPOT_RELEASES:
        known = ", ".join(sorted(api_versions.HUBSPOT_RELEASES))
        raise ValueError(f"not a published HubSpot API version ({known})")
    return value


HubSpotVersion = Annotated[str, AfterValidator(_published_hubspot_version)]


class _Section(BaseModel):
    """camelCase keys in YAML, snake_case in Python; unknown keys refused; immutable; defaults
    validated."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
        validate_default=True,  # a default schedule, zone or region is checked like a given one
    )


class ModelChoice(_Section):
    """The model one callsite uses: Haiku by default, the heavier model behind a flag."""

    model_id: ModelId = HAIKU_GLOBAL
    """Model or inference profile id the callsite calls by default."""
    heavy_model_id: ModelId = SONNET_GLOBAL
    """The heavier model, configured but off unless ``useHeavy`` is set."""
    use_heavy: bool = False
    """Call (and grant) the heavier model instead of the default one."""

    @property
    def active(self) -> str:
        """The model id this callsite calls."""
        return self.heavy_model_id if self.use_heavy else self.model_id

    @property
    def granted(self) -> tuple[str, ...]:
        """Model ids the callsite's role may invoke: only the active one."""
        return (self.active,)


def _daily_cap(default: int, what: str) -> Any:
    """A daily spend cap key (handlers/common/spend.py): its default is 3x the expected day
    at the planned volumes (``make cost``'s usage; tests/infra/test_spend_caps.py checks it)."""
    return Field(
        default=default,
        ge=0,
        le=100000,
        description=f"Most {what} in one UTC day: past it the call is not made, and the work "
        "takes the rules path or waits for the next day (docs/cost.md, daily spend caps). "
        "Default: 3x the expected day.",
    )


class SystemSettings(_Section):
    """Settings every system has."""

    services: ClassVar[tuple[str, ...]] = ("Lambda", "DynamoDB", "SQS", "Secrets Manager")
    """AWS services the system needs in its region (names of ``aws_regions.SERVICES``)."""

    enabled: bool = True
    """Deploy this system in this stack."""
    region: Region
    """AWS region of every resource of the system."""

    @field_validator("region")
    @classmethod
    def _region_offers_the_services(cls, region: str) -> str:
        absent = aws_regions.missing(region, cls.services)
        if absent:
            extra = ""
            if "SES email receiving" in absent:
                regions = ", ".join(sorted(aws_regions.RECEIVING_REGIONS))
                extra = f"; SES receives mail in {regions} only ({aws_regions.RECEIVING_PAGE})"
            raise ValueError(
                f"the region does not offer {', '.join(absent)}, which this system needs{extra}"
            )
        return region

    @field_validator("*")
    @classmethod
    def _profiles_callable_from_the_region(cls, value: Any, info: ValidationInfo) -> Any:
        region = info.data.get("region")  # validated first: it is declared first
        if not isinstance(value, ModelChoice) or not isinstance(region, str):
            return value
        for key, model_id in (("modelId", value.model_id), ("heavyModelId", value.heavy_model_id)):
            why = aws_regions.profile_refusal(model_id, region)
            if why:
                raise ValueError(f"{key}: {why}, not {region} ({aws_regions.PROFILES_PAGE})")
        return value


class DmThresholds(_Section):
    """Score bands: at or above ``automatic`` merges without a person; at or above
    ``propose`` goes to the weekly review; below is only recorded.

    Scores are log-odds in bits that two contacts are one person (0 is even odds, 12 about
    4,000 to one), so the defaults hold whatever the CRM's size; ``make bench-dm`` prints the
    precision and recall of both bands on FEBRL1, FEBRL3 and generated CRM contacts."""

    automatic: float = 12.0
    """Score (bits) at or above which a pair is merged without a person."""
    propose: float = 0.0
    """Score (bits) at or above which a pair is proposed in the weekly review."""

    @model_validator(mode="after")
    def _ordered(self) -> DmThresholds:
        if self.propose >= self.automatic:
            raise ValueError("propose must be below automatic")
        return self


class DmSettings(SystemSettings):
    """Duplicate contact merger."""

    services = (*SystemSettings.services, "S3", "EventBridge Scheduler", "SES sending")

    region: Region = "us-east-1"
    schedule: ScheduleExpression = "cron(0 6 ? * MON *)"
    """When dm-block runs (weekly): reads the CRM, forms blocks, queues them for scoring."""
    full_read_every_weeks: int = Field(default=FULL_READ_EVERY_WEEKS, ge=1, le=13)
    """Every this many weeks dm-block reads the whole CRM; the weeks between read only the
    contacts changed since the last run (1: every week in full). Four bounds the CRM-wide
    figures a week scores with to a month of changes, and, at 5 % changed a week, cuts the
    HubSpot calls of four weeks to about 27 % of four full reads (docs/systems/dm.md)."""
    schedule_timezone: TimeZone = "UTC"
    """IANA time zone both dm schedules are read in."""
    thresholds: DmThresholds = DmThresholds()
    block_cap: int = Field(default=50, ge=2, le=200)
    """Largest block compared in full; a larger one is cut into sorted windows and reported.
    At most 200, so that one block always fits one SQS message."""
    sender_email: Email
    """From address of the weekly review digest (its domain is a verified SES identity)."""
    reviewer_email: Email
    """Who receives the weekly digest of proposals and automatic merges, with their links."""
    link_ttl_days: int = Field(default=30, ge=1, le=30)
    """Lifetime of the signed review and undo links; never beyond the pairs' 30-day TTL."""
    crm_base_url: str = "https://api.hubapi.com"
    """Base URL of the CRM's REST API (HubSpot CRM v3)."""
    digest_schedule: ScheduleExpression = "cron(0 9 ? * MON *)"
    """When dm-merge mails the week's proposals: after dm-block's run has been scored."""
    sweep_schedule: ScheduleExpression = "rate(15 minutes)"
    """How often dm-merge resumes merges and undoes whose 180 s claim ran out with no request
    coming back (a crash, a redelivery inside the claim): finished or put back, listed in the
    digest."""
    undo_days: int = Field(default=90, ge=1, le=365)
    """How long a merge can be undone from its bundle (HubSpot keeps archived records 90 days)."""
    record_floor: float = Field(default=-10.0, le=0.0)
    """Candidate pairs scoring below this (bits) are counted, not written to the pairs table."""
    phone_region: str = Field(default="US", pattern=r"^[A-Z]{2}$")
    """Country assumed for phone numbers written without a country code."""
    portal_contacts: int | None = Field(default=None, ge=1)
    """How many contacts the HubSpot portal holds, about: ``make plan`` and ``make preflight``
    then say what the weekly run does at that size (HubSpot calls, hours, invocations) and
    whether it fits, before it runs."""
    split_above: int = Field(default=SPLIT_ABOVE, ge=1)
    """A weekly run larger than this runs split (dm-stage, partitions in the dm-shards bucket):
    when the contacts dm-block read, or ``portalContacts``, exceed it. Below it one dm-block
    invocation blocks the whole portal (measured to 1,000,000 contacts; ``make plan`` says where
    it stops fitting). Above it every week is a full read: a week's read of the changes needs the
    stored index, which one invocation blocks whole."""
    partition_contacts: int = Field(default=5_000, ge=10, le=50_000)
    """About how many contacts one partition of the split run holds: each dm-stage invocation
    holds one partition's worth (5,000: about 150 MB at most, measured)."""


class LerSettings(SystemSettings):
    """Lead enricher."""

    services = (
        *SystemSettings.services,
        "S3",
        "EventBridge",
        "EventBridge Scheduler",
        "SES sending",
        "SES email receiving",
        "Amazon Bedrock runtime",
    )

    region: Region = "eu-west-2"
    """AWS region of every resource of the system."""
    intake_auth: Literal["shared_secret", "iam"] = "shared_secret"
    """How ler-intake's Function URL is guarded: ``shared_secret`` (public URL, the
    ``ler-intake-secret`` checked in-function) or ``iam`` (AWS_IAM, callers sign with SigV4)."""
    inbound_address: Email
    """Address whose mail SES receives into the inbound-mail lane."""
    activate_inbound_rule_set: bool = True
    """Make this stack's SES receipt rule set the active one. An account has one active rule
    set per region, and dev and prod share the account: activate it in one stack only."""
    sender_email: Email
    """From address of the junk digest and the dead-letter alerts (a verified SES identity)."""
    digest_recipient: Email
    """Receives the daily junk digest and the dead-letter alerts."""
    normalize_model: ModelChoice = ModelChoice()
    """Model of ler-normalize (fuzzy field resolution)."""
    dedupe_model: ModelChoice = ModelChoice()
    """Model of ler-dedupe (the ambiguous same-person band)."""
    filter_model: ModelChoice = ModelChoice()
    """Model of ler-filter (borderline keep-or-drop)."""
    retry_schedule: ScheduleExpression = "rate(15 minutes)"
    """When ler-retry re-drives the dead letters and retries pending enrichments."""
    backfill_schedule: ScheduleExpression = "cron(0 3 * * ? *)"
    """When ler-backfill re-enriches pending leads and re-syncs ler-identity from the CRM."""
    digest_schedule: ScheduleExpression = "cron(0 8 * * ? *)"
    """When ler-digest emails the previous day's junk."""
    quiet_report: QuietReport = "line"
    """A day with nothing dropped and nothing degraded sends no digest: `line` mails one line
    on Mondays instead (the owner sees the system is alive), `none` nothing."""
    rescue_link_days: int = Field(default=14, ge=1, le=60)
    """How long the junk digest's rescue links work (a person sends a dropped lead back)."""
    schedule_timezone: TimeZone = "Europe/London"
    """IANA time zone the three schedules are read in."""
    enrich_cache_days: int = Field(default=90, ge=1, le=365)
    """Days a domain's firmographics stay cached in ler-enrich-cache (DynamoDB TTL)."""
    raw_days: int = Field(default=30, ge=1, le=365)
    """Days ler-raw keeps a lead's original (mail, upload, form payload) before S3 lifecycle
    deletes it: long enough to re-run a lead a failure held up for a few days."""
    records_days: int = Field(default=90, ge=1, le=730)
    """Days ler-records keeps a lead's normalised and pushed record (S3 lifecycle): the CRM
    holds the lead from then on; a quarter answers "why was it pushed like this"."""
    junk_days: int = Field(default=30, ge=1, le=365)
    """Days ler-junk keeps a dropped lead (S3 lifecycle); at least ``rescueLinkDays``, so a
    digest's rescue link always finds its lead."""
    identity_days: int = Field(default=400, ge=30, le=1100)
    """Days a ler-identity entry (email, phone, fingerprint -> CRM contact) lives after its
    last write (DynamoDB TTL); each push and the nightly re-sync from the CRM write it again,
    so only a contact gone from the CRM expires: a year and a month of a lead not seen again."""
    crm_base_url: str = Field(default="https://api.hubapi.com", pattern=r"^https://")
    """Base URL of the CRM API (HubSpot CRM v3)."""
    enrichment_provider: Literal["pdl", "apollo"] = "pdl"
    """Firmographic provider of ler-enrich: People Data Labs Company Enrichment (``pdl``) or
    Apollo Organization Enrichment (``apollo``); its API key goes in
    ``<prefix>-ler-enrichment-key``."""
    enrichment_base_url: str | None = Field(default=None, pattern=r"^https://")
    """Base URL of the provider's API; unset: the provider's own
    (``https://api.peopledatalabs.com``, ``https://api.apollo.io``)."""
    enrichment_api_version: str | None = Field(default=None, pattern=r"^v\d+$")
    """Provider API version; unset: the one the adapter maps (``v5`` for pdl, ``v1`` for apollo)."""
    default_phone_region: str = Field(default="GB", pattern=r"^[A-Z]{2}$")
    """ISO country assumed for a phone number written without a country code."""
    min_submit_seconds: int = Field(default=3, ge=0, le=300)
    """A form submitted faster than this after it was rendered is a bot (pre-screen)."""
    dedupe_link_score: float = Field(default=0.9, gt=0, le=1)
    """Fuzzy score at or above which a near-match links without the model."""
    dedupe_ambiguous_score: float = Field(default=0.7, gt=0, le=1)
    """Fuzzy score at or above which (below the link score) the model breaks the tie."""
    junk_score: float = Field(default=0.75, gt=0, le=1)
    """Junk score at or above which a lead is dropped without the model."""
    borderline_score: float = Field(default=0.4, gt=0, le=1)
    """Junk score at or above which (below the junk score) the model breaks the tie."""
    max_retry_passes: int = Field(default=4, ge=1, le=20)
    """Enrichment passes ler-retry makes for a pending lead before leaving it to ler-backfill."""
    dlq_alert_threshold: int = Field(default=10, ge=1, le=10000)
    """Messages waiting in the dead-letter queues at which ler-retry emails an alert."""
    daily_model_calls: int = _daily_cap(23, "Bedrock calls of ler-normalize, ler-dedupe and ler-filter together")
    daily_enrichment_lookups: int = _daily_cap(50, "provider lookups of ler-enrich")

    @property
    def enrichment_url(self) -> str:
        """The provider's base URL, configured or its default."""
        api = api_versions.ENRICHMENT_APIS[self.enrichment_provider]
        return self.enrichment_base_url or api.base_url

    @property
    def enrichment_version(self) -> str:
        """The provider's API version, configured or the adapter's."""
        api = api_versions.ENRICHMENT_APIS[self.enrichment_provider]
        return self.enrichment_api_version or api.version

    @model_validator(mode="after")
    def _no_clearbit(self) -> LerSettings:
        if self.enrichment_base_url and "clearbit.com" in self.enrichment_base_url:
            raise ValueError(
                "enrichmentBaseUrl points at Clearbit, which issues no new keys since its "
                "platform moved into HubSpot Breeze Intelligence: set enrichmentProvider to "
                "pdl or apollo and drop enrichmentBaseUrl"
            )
        return self

    @model_validator(mode="after")
    def _junk_outlives_its_links(self) -> LerSettings:
        if self.junk_days < self.rescue_link_days:
            raise ValueError("junkDays must be at least rescueLinkDays")
        return self

    @model_validator(mode="after")
    def _ordered_bands(self) -> LerSettings:
        if self.dedupe_ambiguous_score >= self.dedupe_link_score:
            raise ValueError("dedupeAmbiguousScore must be below dedupeLinkScore")
        if self.borderline_score >= self.junk_score:
            raise ValueError("borderlineScore must be below junkScore")
        return self


class LsSettings(SystemSettings):
    """Lead source attributor."""

    services = (*SystemSettings.services, "EventBridge Scheduler", "SES sending")

    region: Region = "us-east-1"
    site_origins: tuple[Origin, ...] = Field(min_length=1)
    """Origins of the site's pages: the only ones ls-capture accepts beacons from (CORS too)."""
    report_cache_seconds: int = Field(default=86400, ge=0, le=86400)
    """How long a computed report is reused in ls-report and by HTTP caches (0: never)."""
    touch_ttl_days: int = Field(default=548, ge=30, le=1100)
    """Days a touch is kept before DynamoDB TTL may delete it (548 = 18 months)."""
    sender_email: Email | None = None
    """From address of the weekly owner report mail (a verified SES identity); with
    `reportRecipient`, or neither (then no mail is sent)."""
    report_recipient: Email | None = None
    """Who receives the weekly attribution report by email (last week, strict mode)."""
    report_schedule: ScheduleExpression = "cron(0 7 ? * MON *)"
    """When ls-report mails the previous seven days' report to `reportRecipient`."""
    report_timezone: TimeZone = "UTC"
    """IANA time zone `reportSchedule` is read in."""
    report_link_days: int = Field(default=28, ge=1, le=90)
    """Days the weekly mail's signed link to the report page works (ls-report-page); the
    latest four mails' links work at the default."""
    report_link_views: int = Field(default=100, ge=1, le=10000)
    """Views one week's report page answers (ls-report-page) before its link is refused (429):
    the owner and the few people a mail is forwarded to, a few times each; each view costs
    one read and one small write."""

    @property
    def mails_report(self) -> bool:
        """Whether the weekly owner mail is configured."""
        return self.report_recipient is not None

    @model_validator(mode="after")
    def _report_mail_pair(self) -> LsSettings:
        if (self.sender_email is None) != (self.report_recipient is None):
            raise ValueError("senderEmail and reportRecipient are set together, or neither")
        return self


_HTTPS_SITE = re.compile(r"^https://[A-Za-z0-9.-]+\.[A-Za-z]{2,}(/[A-Za-z0-9._~/-]*)?$")
WebAddress = Annotated[str, _matches(_HTTPS_SITE, "an https:// web address such as https://www.example.com")]


class CustomerVoice(_Section):
    """How a system that writes to customers (upsr, rrs) signs what it sends: every SMS starts
    with ``businessName``, every email comes from "senderName <senderEmail>" with replies to
    ``replyToEmail``, and every page a customer lands on links back to ``websiteUrl``."""

    sender_name: str | None = Field(default=None, min_length=1, max_length=60, pattern=r"^[^<>\"@\r\n]+$")
    """Display name of the emails to customers ("Name <address>"); default ``businessName``."""
    reply_to_email: Email | None = None
    """Where a customer's reply to an email goes; default ``senderEmail``."""
    website_url: WebAddress | None = None
    """The business's own web address, offered on every page a customer lands on."""


class UpsrSettings(SystemSettings, CustomerVoice):
    """Upsell recommender."""

    services = (
        *SystemSettings.services,
        "EventBridge Scheduler",
        "SES sending",
        "End User Messaging SMS",
        "Amazon Bedrock runtime",
    )

    region: Region = "eu-west-2"
    picker_model: ModelChoice = ModelChoice()
    """The model upsr-picker calls for the ranked shortlist (the only Bedrock caller)."""
    store_domain: str = Field(pattern=r"^[a-z0-9-]+\.myshopify\.com$")
    """The Shopify store: Admin API host and add-to-cart links."""
    business_name: str = Field(min_length=1, max_length=24, pattern=r"^[^<>\"@\r\n]+$")
    """The shop's name as customers know it: the first words of every nudge, the name on the
    emails and on every page a tap lands on. At most 24 characters: beside the one-tap link and
    the opt-out line, a one-segment SMS has room for the name and a short product title."""
    sender_email: Email
    """SES sender of the owner's roll-up (and of email nudges); its domain is verified in SES."""
    owner_email: Email
    """Receives the take-up roll-up."""
    sms_origination_identity: str = Field(
        pattern=r"^(phone-number|pool|sender-id)/[A-Za-z0-9_/-]+$",
        description="AWS End User Messaging SMS identity the nudge is sent from",
    )
    daily_model_calls: int = _daily_cap(198, "Bedrock calls of upsr-picker")
    daily_sms: int = _daily_cap(199, "SMS nudges of upsr-sender")
    nudge_delay_minutes: int = Field(default=120, ge=0, le=10080)
    """Delay between the order and the nudge (the offer's send_at)."""
    attribution_window_hours: int = Field(default=72, ge=1, le=720)
    """A tap inside this window after the nudge counts as taken; the sweep closes it after."""
    max_nudges_per_30_days: int = Field(default=2, ge=1, le=30)
    """Frequency cap per customer."""
    sender_schedule: ScheduleExpression = "rate(5 minutes)"
    """When upsr-sender releases due offers."""
    sweep_schedule: ScheduleExpression = "rate(1 hour)"
    """When upsr-sweep closes windows and considers the roll-up."""
    catalog_sync_schedule: ScheduleExpression = "rate(15 minutes)"
    """When upsr-catalog-sync refreshes stock and prices."""
    shopify_api_version: str = Field(
        default=api_versions.SHOPIFY_DEFAULT_VERSION,
        pattern=r"^\d{4}-(01|04|07|10)$",
        description="Shopify Admin API version the catalogue sync calls (quarterly releases, "
        "each supported for at least 12 months; a version outside that window is warned about "
        "in the plan)",
    )
    max_price_ratio: float = Field(
        default=0.5,
        gt=0,
        le=5,
        description="An add-on may cost at most this share of the order's subtotal",
    )
    catalogue_max_age_hours: int = Field(
        default=6,
        ge=1,
        le=168,
        description="A catalogue row not refreshed for this long counts as out of stock",
    )
    webhook_max_age_hours: int = Field(
        default=48,
        ge=1,
        le=168,
        description="Orders created longer ago are refused as replays (Shopify retries 48 h)",
    )
    link_grace_days: int = Field(
        default=14,
        ge=0,
        le=60,
        description="The tap link keeps working this long after the window, so a late tap "
        "is recorded as out-of-window instead of being refused",
    )
    offer_retention_days: int = Field(
        default=90,
        ge=7,
        le=730,
        description="Offers (and the contact details they carry) expire by TTL this long "
        "after their window closes",
    )
    customer_days: int = Field(
        default=400,
        ge=31,
        le=1100,
        description="A customer's purchase history and nudge stamps in upsr-customers expire "
        "by TTL this long after their last order: a year of repeat orders and a month",
    )
    order_days: int = Field(
        default=30,
        ge=3,
        le=365,
        description="An order's marker in upsr-orders expires by TTL this long after the "
        "order: past Shopify's 48-hour retries, and a month for the owner's questions",
    )
    report_hour: int = Field(
        default=8, ge=0, le=23, description="Local hour after which the daily roll-up is sent"
    )
    report_timezone: TimeZone = "Europe/London"
    """IANA zone of `reportHour`, and of the dates the roll-up shows."""
    quiet_report: QuietReport = "line"
    """A day with nothing new nudged, tapped, taken, lost or degraded sends no roll-up: `line`
    mails one line on Mondays instead (the owner sees the system is alive), `none` nothing."""


class OpeningHours(_Section):
    """When the sweep may act and when a message may be sent, in ``timezone``."""

    start: ClockTime = "09:00"
    """Opening time, HH:MM."""
    end: ClockTime = "18:00"
    """Closing time, HH:MM."""
    timezone: TimeZone = "Europe/London"
    """IANA time zone the hours are read in."""


class RrsSettings(SystemSettings, CustomerVoice):
    """Review request sender."""

    services = (
        *SystemSettings.services,
        "EventBridge Scheduler",
        "SES sending",
        "End User Messaging SMS",
        "Amazon Bedrock runtime",
    )

    region: Region = "eu-west-2"
    grade_model: ModelChoice = ModelChoice()
    """Model of rrs-sender's first call: grades the captured signal into a band."""
    compose_model: ModelChoice = ModelChoice()
    """Model of rrs-sender's second call: phrases the ask (it never sees or writes a link)."""
    sender_email: Email
    """From address of every ask and of the owner handover; its domain is the SES identity."""
    owner_email: Email
    """Owner inbox that receives the escalation handovers."""
    sms_origination_identity: str = Field(
        pattern=r"^(phone-number|pool|sender-id)/[A-Za-z0-9_/-]+$",
    )
    """AWS End User Messaging SMS identity the ask is sent from (``pool/<id>``,
    ``phone-number/<id>`` or ``sender-id/<id>/<country>``)."""
    daily_model_calls: int = _daily_cap(60, "Bedrock calls of rrs-sender (grading and writing)")
    daily_sms: int = _daily_cap(30, "SMS asks of rrs-sender")
    review_url: str = Field(pattern=r"^https://")
    """Public review page; only customers graded happy are ever sent it."""
    feedback_url: str = Field(pattern=r"^https://")
    """Private feedback form; code appends ``ref=<signed token>``, which the tool echoes back."""
    request_delay_hours: int = Field(default=2, ge=0, le=336)
    """Hours after a job's completion before the ask is due (then moved into opening hours)."""
    opening_hours: OpeningHours = OpeningHours()
    """Send window (read in the customer's time zone) and the sweep's gate (in ``timezone``)."""
    sweep_schedule: ScheduleExpression = "rate(15 minutes)"
    """How often rrs-sweep looks for requests whose schedule misfired."""
    sync_schedule: ScheduleExpression = "rate(15 minutes)"
    """How often rrs-sync mirrors the customer sheet into rrs-customers."""
    sheet_source: str = ""
    """Customer sheet: a CSV export URL (``https://...``) or ``s3://bucket/key``; empty for
    none. An S3 source grants rrs-sync ``s3:GetObject`` on that one object only."""
    retention_days: int = Field(default=400, ge=30, le=3650)
    """Days a request, its job and its audit trail live (rrs-requests, rrs-jobs, rrs-audit,
    DynamoDB TTL): a year of asks to answer "did we ask this customer", and a month."""
    customer_days: int = Field(default=400, ge=30, le=3650)
    """Days an rrs-customers row lives after its last write (DynamoDB TTL); each sync of the
    sheet and each job writes it again, so only a customer gone from both expires."""
    business_name: str = Field(default="our team", min_length=1, max_length=60)
    """Name the asks are signed with; the compose model is told it."""
    phone_region: str = Field(default="GB", pattern=r"^[A-Z]{2}$")
    """Country (ISO 3166 alpha-2) assumed for phone numbers written without ``+<code>``."""
    sweep_grace_minutes: int = Field(default=30, ge=5, le=1440)
    """A scheduled request this long past due counts as a straggler for rrs-sweep."""
    sweep_max_attempts: int = Field(default=3, ge=1, le=10)
    """Re-enqueues rrs-sweep makes for one straggler before escalating it to the owner."""
    link_ttl_days: int = Field(default=30, ge=1, le=90)
    """Lifetime of the signed ``ref`` token in the private feedback link."""

    @model_validator(mode="after")
    def _sheet_source_shape(self) -> RrsSettings:
        shape = r"^(https://\S+|s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/[^*?\s]+)$"
        if self.sheet_source and not re.match(shape, self.sheet_source):
            raise ValueError(
                "sheetSource is not an https:// CSV export URL "
                "or s3://bucket/key (no wildcards)"
            )
        return self


class Systems(_Section):
    """One section per system; a missing section means the system is not deployed."""

    dm: DmSettings | None = None
    ler: LerSettings | None = None
    ls: LsSettings | None = None
    upsr: UpsrSettings | None = None
    rrs: RrsSettings | None = None

    def enabled(self) -> dict[str, SystemSettings]:
        """The enabled systems' settings by system key, in a stable order."""
        return {
            key: settings
            for key in ("dm", "ler", "ls", "upsr", "rrs")
            if (settings := getattr(self, key)) is not None and settings.enabled
        }


class StackConfig(_Section):
    """The whole stack's configuration."""

    prefix: str = Field(pattern=r"^[a-z][a-z0-9]{1,9}$")
    """First part of every physical name (``dev`` -> ``dev-dm-block``); 2-10 lowercase characters."""
    environment: Literal["dev", "prod"]
    """``prod`` turns on deletion protection, ``protect`` and secret recovery windows."""
    alert_email: Email
    """Receives the monthly budget alarm and every CloudWatch alarm of the stack."""
    alert_subscribers: tuple[Email, ...] = ()
    """More addresses the alarm topics email, besides ``alertEmail``."""
    tracing: bool = False
    """X-Ray active tracing and the Powertools Tracer on every function (off in dev, on in prod)."""
    alarms: Literal["failures", "none"] = "failures"
    """``failures``: every dead-letter and failure queue, stuck work queue, missed schedule,
    throttle (one per region) and every error nothing downstream keeps is alarmed, emailing
    ``alertEmail``. ``none``: no CloudWatch alarm and no alarm topic (a developer's stack:
    failures still land in DLQs and on-failure destinations, errors in the logs; the budget
    alarm stays). ``none`` is refused in ``environment: prod``."""
    dashboard: bool = True
    """The stack's CloudWatch dashboard, ``<prefix>-crm-automations`` ($3 a month)."""
    business_metrics: bool = True
    """The handlers emit the business metrics (custom metrics, billed per series and hour
    emitted); false turns Powertools Metrics off (``POWERTOOLS_METRICS_DISABLED``)."""
    alert_topic_key: Literal["customer-managed", "none"] = "customer-managed"
    """Alert topics (alarms, budget) under a customer-managed KMS key each ($1 a month per
    region), or unencrypted at rest (their messages name alarms and thresholds, no data)."""
    secret_store: Literal["secretsmanager", "ssm"] = "secretsmanager"
    """Where the secrets live. ``secretsmanager``: one Secrets Manager secret per
    credential ($0.40 a month each), deleted with a recovery window in prod. ``ssm``: one
    Parameter Store SecureString per credential under the AWS managed key ``aws/ssm``
    (standard parameters and that key cost nothing a month; no recovery window). Either way
    each function may read exactly the credentials it uses, fetched at call time."""
    permissions_boundary: bool = False
    """Every role the stack creates carries the permissions boundary
    ``crm-pipeline/<prefix>-role-boundary`` that bootstrap/ creates (docs/pipeline.md): true
    for a stack the pipeline deploys, whose deploy role may create no role without it."""
    queue_triggers: Literal["on", "paused"] = "on"
    """``on``: Lambda polls every SQS work queue for its function, and keeps polling it idle
    (about five 20-second long polls at a time per queue, about $0.26 a month each at list
    price). ``paused``: every queue's event source mapping is declared disabled, so an idle
    stack makes no receives: queues, DLQs and grants stay, messages wait in their queue until
    ``queueTriggers: on`` and ``pulumi up`` (a developer's stack). Refused in ``environment:
    prod``."""
    public_concurrency: int | None = Field(default=10, ge=1, le=100)
    """Reserved concurrency of every function behind a public (auth NONE) Function URL: its
    most simultaneous requests, past which Lambda answers 429. null: none reserved, for an
    account whose concurrency quota cannot reserve (`make preflight` says)."""
    monthly_budget_usd: float = Field(gt=0, le=100000)
    """Monthly cost budget of the account; alarms at 80 % and 100 % actual, 100 % forecast."""
    mail_identity_owner: bool = True
    """This stack declares the SES sending identities (one per sender domain and region). An
    identity is unique per account and region and dev and prod share the account: true in
    exactly one stack (prod); the other sends from the same identities without declaring them."""
    powertools_layer_arns: Mapping[Region, str] = Field(default_factory=dict)
    """Powertools layer ARN pinned per region; otherwise the latest from AWS's public SSM parameter."""
    hubspot_api_version: HubSpotVersion = api_versions.HUBSPOT_DEFAULT_VERSION
    """HubSpot date-based API version dm and ler call (``/crm/objects/<version>/...``). Each
    version is current for 6 months after its GA and unsupported 18 months after it
    (2026-09: GA 2026-09-08, unsupported from 2028-03-08); ``make plan`` shows the window and
    warns outside it. Only versions listed in ``handlers/common/api_versions.py``."""
    systems: Systems = Systems()
    """One section per system."""
    allow_replacement: tuple[str, ...] = ()
    """Logical names of tables and buckets (``dm-merges``, ``ler-raw``) one update of a protected
    stack may replace or delete, losing their data: ``make plan BASE=...`` refuses any other.
    Empty but for that update."""

    @field_validator("alarms")
    @classmethod
    def _prod_is_watched(cls, value: str, info: ValidationInfo) -> str:
        if value == "none" and info.data.get("environment") == "prod":
            raise ValueError("none is for a developer's stack: environment prod keeps its failures alarmed")
        return value

    @field_validator("queue_triggers")
    @classmethod
    def _prod_consumes(cls, value: str, info: ValidationInfo) -> str:
        if value == "paused" and info.data.get("environment") == "prod":
            raise ValueError("paused is for a developer's stack: environment prod consumes its queues")
        return value


# What each ``Field(pattern=...)`` of the schema means, said in words: a config error never
# shows a raw regular expression (a test checks every pattern of the schema is here).
PATTERN_WORDS: dict[str, str] = {
    r"^[a-z][a-z0-9]{1,9}$": "2 to 10 lowercase letters or digits, starting with a letter (dev, prod)",
    r"^[A-Z]{2}$": "a two-letter ISO country code in capitals such as GB or US",
    r"^https://": "an https:// URL",
    r"^v\d+$": "a version such as v5",
    r"^[a-z0-9-]+\.myshopify\.com$": "the store's <name>.myshopify.com domain (not its own domain)",
    r"^(phone-number|pool|sender-id)/[A-Za-z0-9_/-]+$": (
        "an End User Messaging SMS identity: pool/<id>, phone-number/<id> or sender-id/<id>/<country>"
    ),
    r"^\d{4}-(01|04|07|10)$": "a quarterly Shopify API version such as 2026-10",
    r"^[^<>\"@\r\n]+$": "a name on one line without <, >, \" or @ (it is shown as the sender)",
}


def _section_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The settings class that holds the key at ``loc`` (for "did you mean")."""
    model: type[BaseModel] = StackConfig
    for part in loc[:-1]:
        field = next(
            (f for name, f in model.model_fields.items() if part in (name, to_camel(name))), None
        )
        if field is None:
            return None
        found = _model_in(field.annotation)
        if found is None:
            return None
        model = found
    return model


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType):
        for arg in get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None


def near_key(loc: tuple[int | str, ...]) -> str | None:
    """The known key closest to an unknown one at the same place (difflib), if any is near."""
    model = _section_at(loc)
    if model is None or not isinstance(loc[-1], str):
        return None
    known = [to_camel(name) for name in model.model_fields]
    by_case = {k.lower(): k for k in known}
    if loc[-1].lower() in by_case:
        return by_case[loc[-1].lower()]
    close = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.6)
    return close[0] if close else None


def _problem(error: Mapping[str, Any]) -> Problem:
    loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        near = near_key(loc)
        hint = f"; did you mean {near}?" if near else ""
        if not near and re.search(r"key|secret|token|password", str(loc[-1]), re.I):
            hint = "; secrets are not stack config: `make secrets STACK=<stack>` stores them"
        return Problem(loc, f"unknown key{hint} (its value is not shown)", unknown_key=True)
    if kind == "missing":
        return Problem(loc, "missing: this key is required")
    if kind == "string_pattern_mismatch":
        pattern = str((error.get("ctx") or {}).get("pattern", ""))
        return Problem(loc, f"should be {PATTERN_WORDS.get(pattern, 'of the documented form')}")
    # pydantic's own messages describe the expectation, never the input; ours likewise.
    return Problem(loc, str(error["msg"]).removeprefix("Value error, "))


def parse(raw: Mapping[str, Any]) -> StackConfig:
    """Validate raw config (keys without the namespace, values decoded from YAML/JSON).

    Raises ConfigError with one problem per line, each naming the full config key and never
    the value given.
    """
    try:
        return StackConfig.model_validate(dict(raw))
    except ValidationError as err:
        raise ConfigError([_problem(e) for e in err.errors()]) from None


def from_pulumi_config(values: Mapping[str, str], source: Path | None = None) -> StackConfig:
    """Validate the engine's config map (``crm-automations:key`` -> string, objects as JSON).

    ``source``: the stack file the values came from; its problems are then located in it
    (file, line and column).
    """
    raw: dict[str, Any] = {}
    for full_key, text in values.items():
        namespace, _, key = full_key.partition(":")
        if namespace != PROJECT:
            continue
        try:
            raw[key] = json.loads(text)
        except (json.JSONDecodeError, TypeError):
            raw[key] = text
    try:
        return parse(raw)
    except ConfigError as err:
        if source is None:
            raise
        raise located(err, source) from None


# External API versions in use (the data and rules: handlers/common/api_versions.py) -----


def api_version_warnings(config: StackConfig, today: dt.date) -> list[str]:
    """Every configured external API version outside its window (a warning, not an error)."""
    found: list[str] = []
    ler, upsr = config.systems.ler, config.systems.upsr
    if ler is not None and ler.enabled:
        message = api_versions.enrichment_warning(ler.enrichment_provider, ler.enrichment_version)
        if message:
            found.append(message)
    if upsr is not None and upsr.enabled:
        message = api_versions.shopify_warning(upsr.shopify_api_version, today)
        if message:
            found.append(message)
    return found


def api_version_windows(config: StackConfig) -> list[str]:
    """One line per external API in use: version and support window, for the plan."""
    lines: list[str] = []
    ler, upsr = config.systems.ler, config.systems.upsr
    if ler is not None and ler.enabled:
        api = api_versions.ENRICHMENT_APIS[ler.enrichment_provider]
        lines.append(
            f"ler enrichment: {ler.enrichment_provider} {ler.enrichment_version} at "
            f"{ler.enrichment_url} ({api.support})"
        )
    if upsr is not None and upsr.enabled:
        lines.append(f"upsr Shopify Admin API: {api_versions.shopify_window(upsr.shopify_api_version)}")
    return lines
