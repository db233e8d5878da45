"""What the infrastructure and the handlers must agree on: names, tables, each function's settings.

``components/systems/lead_enricher.py`` imports this module, so a renamed prefix or event type
changes the S3 triggers, IAM scopes and EventBridge rules together with the code that writes
and reads them; each function's environment is built from its settings record below, and the
handler reads the same record (``handlers.common.settings.current``), so a variable the handler
needs and the infra does not set fails ``make plan``. No Pulumi here: this module ships.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from handlers.common.settings import Settings
from handlers.common.tables import Index, Key, TableSpec

# Seed names ---------------------------------------------------------------------------------
# Functions carry a _FUNCTION suffix: ``JUNK`` and ``NORMALIZED`` are the chain's event types.

INTAKE_FUNCTION: Final = "ler-intake"
NORMALIZE_FUNCTION: Final = "ler-normalize"
ENRICH_FUNCTION: Final = "ler-enrich"
DEDUPE_FUNCTION: Final = "ler-dedupe"
FILTER_FUNCTION: Final = "ler-filter"
PUSH_FUNCTION: Final = "ler-push"
JUNK_WRITER_FUNCTION: Final = "ler-junk-writer"
RETRY_FUNCTION: Final = "ler-retry"
BACKFILL_FUNCTION: Final = "ler-backfill"
DIGEST_FUNCTION: Final = "ler-digest"
DEGRADABLE: Final = (
    ("CrmRejected", PUSH_FUNCTION),
    ("ModelRefused", NORMALIZE_FUNCTION),
    ("ModelRefused", DEDUPE_FUNCTION),
    ("ModelRefused", FILTER_FUNCTION),
)
"""(kind, function) of every fallback ler notes in ler-enrich-cache for the junk digest."""
RESCUE_FUNCTION: Final = "ler-rescue"
"""The digest's rescue links: a public Function URL that sends a dropped lead back through."""

RAW_BUCKET: Final = "ler-raw"
"""Raw originals: SES mail, CSV uploads, form payloads, upload reports."""
RECORDS_BUCKET: Final = "ler-records"
JUNK_BUCKET: Final = "ler-junk"
INTAKE_QUEUE: Final = "ler-intake-queue"
LEAD_MESSAGE_VERSION: Final = 1
"""Format version of a ler-intake-queue message (``Lead.to_json``; ``handlers.common.formats``)."""
INTAKE_DLQ: Final = "ler-intake-dlq"
"""ler-intake-queue's own dead-letter queue (SQS redrive), re-driven by ler-retry."""
DLQ: Final = "ler-dlq"
"""Catches every asynchronous failure of the system (rule targets, async invokes)."""
ENRICHMENT_KEY: Final = "ler-enrichment-key"
CRM_KEY: Final = "ler-crm-key"
INTAKE_SECRET: Final = "ler-intake-secret"
ERASE_DELETED_CONTACT_ACTION: Final = "erase-deleted-contact"
"""ler-backfill's event ``{"action": ..., "crm_id": ...}`` from ler-push (``crm_deletions``)."""
FORGET_SALT: Final = "ler-forget-salt"
"""Salt of the hashes ``make forget`` leaves on ler-identity (``forgotten#``), handlers/common/forgotten.py."""
RESCUE_KEY: Final = "ler-rescue-link-key"
"""Keyring signing the junk digest's rescue links (read by ler-digest and ler-rescue only)."""
RESCUE_ACTION: Final = "rescue"
"""The rescue link token's action; its subject is the junk object's key."""
RESCUE_PATH: Final = "/rescue"
INBOUND_LANE: Final = "ler-inbound"

EVENT_BUS: Final = "default"
"""The chain's bus: the account's default bus (dev and prod tell their events apart by source)."""

MAIL_PREFIX: Final = "inbound/"
"""ler-raw: SES stores inbound mail here; triggers ler-intake."""
UPLOAD_PREFIX: Final = "upload/"
"""ler-raw: manual CSV uploads; triggers ler-intake."""
FORM_PREFIX: Final = "form/"
"""ler-raw: ler-intake keeps the raw form/webhook payloads here; triggers nothing."""
TRIGGER_PREFIXES: Final = (MAIL_PREFIX, UPLOAD_PREFIX)
REPORT_PREFIX: Final = "reports/"
"""ler-raw: one report per CSV upload (``reports/<upload key>.json``): progress while intake
reads it across invocations, then every row's fate; triggers nothing."""
UPLOAD_CONTINUE: Final = "ler_upload_continue"
"""ler-intake's event to itself: go on reading an upload from its report's cursor."""

NORMALIZED_PREFIX: Final = "normalized/"
"""ler-records: the normalised record ler-normalize writes."""
RECORDS_PREFIX: Final = "records/"
"""ler-records: the clean, enriched, deduped record of each lead that reached the CRM."""
JUNK_PREFIX: Final = "junk/"
"""ler-junk: one object per dropped lead, under ``junk/<UTC date>/``."""

NORMALIZED: Final = "le.normalized"
ENRICHED: Final = "le.enriched"
DEDUPED: Final = "le.deduped"
CLEAN: Final = "le.clean"
JUNK: Final = "le.junk"
PIPELINE_EVENTS: Final = (NORMALIZED, ENRICHED, DEDUPED, CLEAN, JUNK)

RESYNC_ACTION: Final = "resync_page"
"""ler-backfill's direct invoke of ler-push: re-sync one page of the CRM export."""

IDENTITY_BY_CRM_ID: Final = "by-crm-id"
"""ler-identity's global secondary index on ``crm_id``."""


def event_source(prefix: str) -> str:
    """The EventBridge ``source`` of one stack's events.

    dev and prod share the account and its default bus, so the stack prefix is part of the
    source and each stack's rules match only its own events.
    """
    return f"crm.{prefix}.ler"


# Tables -------------------------------------------------------------------------------------

IDENTITY_TTL: Final = "expires_at"
"""TTL attribute of ler-identity: ``identity_days`` after the row's last write (epoch seconds)."""
IDENTITY: Final = TableSpec(
    "ler-identity",
    Key("id_key"),
    indexes=(Index(IDENTITY_BY_CRM_ID, Key("crm_id")),),
    ttl_attribute=IDENTITY_TTL,
)
"""``id_key`` (EMAIL#, PHONE#, FP#, blocking keys, push claims) -> the CRM contact; and
``forgotten#<hash>`` rows: a person ``make forget`` erased, with ``forgotten_at`` (``forgotten_leads``)."""
FORGOTTEN_KEEP_DAYS: Final = 366
"""How long a ``forgotten#`` row outlives the erasure: the longest a lead received before it can
still be processed (a replay from ler-raw, which keeps an original at most ``rawDays``' upper
bound, 365 days; a dead letter, 14 days a re-drive), plus a day."""
CACHE_KEY: Final = "domain"
CACHE_TTL: Final = "ttl"
ENRICH_CACHE: Final = TableSpec("ler-enrich-cache", Key(CACHE_KEY), ttl_attribute=CACHE_TTL)
"""One item per company domain (firmographics, TTL ``ttl``), plus ``pending#`` markers, the
``degraded#`` notes of handlers/common/degradations.py and ``make verify``'s ``check#``
arrivals (``check_arrivals``)."""
CHECK_ARRIVAL_PREFIX: Final = "check#"
"""ler-push's note that ``make verify``'s check lead arrived: ``check#<lead id>``."""
TABLES: Final = (IDENTITY, ENRICH_CACHE)


# Settings: one record per function (variable = upper-cased field name) ----------------------

INTAKE_AUTH_MODES: Final = ("shared_secret", "iam")


@dataclass(frozen=True)
class IntakeSettings(Settings):
    """ler-intake."""

    raw_bucket: str
    junk_bucket: str
    intake_queue_url: str
    intake_auth: str
    """``shared_secret`` (the secret checked in-function) or ``iam`` (SigV4 by the URL)."""
    intake_secret_id: str | None
    """Set only in shared_secret mode."""
    min_submit_seconds: int

    def __post_init__(self) -> None:
        if self.intake_auth not in INTAKE_AUTH_MODES:
            raise ValueError(f"INTAKE_AUTH must be shared_secret or iam, not {self.intake_auth!r}")


@dataclass(frozen=True)
class NormalizeSettings(Settings):
    """ler-normalize."""

    event_source: str
    cache_table: str
    """Only for the degradation note of a refused model (handlers/common/degradations.py)."""
    records_bucket: str
    identity_table: str
    """Only its ``forgotten#`` rows (``forgotten_leads``)."""
    forget_salt_secret_id: str
    normalize_model_id: str
    daily_model_calls: int
    default_phone_region: str


@dataclass(frozen=True)
class EnrichSettings(Settings):
    """ler-enrich."""

    event_source: str
    cache_table: str
    enrichment_secret_id: str
    enrichment_provider: str
    enrichment_base_url: str
    enrichment_api_version: str
    cache_ttl_days: int
    daily_enrichment_lookups: int


@dataclass(frozen=True)
class DedupeSettings(Settings):
    """ler-dedupe."""

    event_source: str
    cache_table: str
    """Only for the degradation note of a refused model (handlers/common/degradations.py)."""
    identity_table: str
    identity_index: str
    dedupe_model_id: str
    daily_model_calls: int
    link_score: float
    ambiguous_score: float


@dataclass(frozen=True)
class FilterSettings(Settings):
    """ler-filter."""

    event_source: str
    cache_table: str
    """Only for the degradation note of a refused model (handlers/common/degradations.py)."""
    filter_model_id: str
    daily_model_calls: int
    junk_score: float
    borderline_score: float


@dataclass(frozen=True)
class PushSettings(Settings):
    """ler-push."""

    identity_table: str
    identity_days: int
    """ler-identity's rows expire this long after push last wrote them."""
    cache_table: str
    """Only for the degradation note of a CRM refusal (handlers/common/degradations.py)."""
    identity_index: str
    records_bucket: str
    backfill_function_name: str
    """Where a contact HubSpot deleted for good is handed to be erased (``crm_deletions``)."""
    forget_salt_secret_id: str
    crm_secret_id: str
    crm_base_url: str
    hubspot_api_version: str
    default_phone_region: str


@dataclass(frozen=True)
class JunkWriterSettings(Settings):
    """ler-junk-writer."""

    junk_bucket: str
    identity_table: str
    """Only its ``forgotten#`` rows (``forgotten_leads``)."""
    forget_salt_secret_id: str


@dataclass(frozen=True)
class RetrySettings(Settings):
    """ler-retry."""

    event_source: str
    dlq_url: str
    intake_dlq_url: str
    intake_queue_url: str
    intake_function_name: str
    cache_table: str
    sender_email: str
    alert_recipient: str
    max_retry_passes: int
    dlq_alert_threshold: int


@dataclass(frozen=True)
class BackfillSettings(Settings):
    """ler-backfill."""

    event_source: str
    cache_table: str
    push_function_name: str
    identity_table: str
    raw_bucket: str
    records_bucket: str
    junk_bucket: str
    """The four only to erase a contact HubSpot deleted for good (``crm_deletions``)."""


@dataclass(frozen=True)
class DigestSettings(Settings):
    """ler-digest."""

    junk_bucket: str
    cache_table: str
    """The degradation notes the digest names (handlers/common/degradations.py)."""
    sender_email: str
    digest_recipient: str
    rescue_url: str
    """ler-rescue's Function URL: the base of each dropped lead's rescue link."""
    rescue_key_secret_id: str
    rescue_link_days: int
    timezone: str
    """The business's IANA zone (ler's ``scheduleTimezone``): times are shown in it."""
    alert_email: str
    """Who deployed the stack (``alertEmail``): the fix of a degradation goes there."""
    quiet_report: str
    """``line``: a day with nothing dropped or degraded sends no digest, Mondays one line;
    ``none``: nothing (handlers/common/quiet.py)."""


@dataclass(frozen=True)
class RescueSettings(Settings):
    """ler-rescue."""

    junk_bucket: str
    intake_queue_url: str
    rescue_key_secret_id: str
    digest_recipient: str
    """Who a rescue is recorded as made by: the links go to this address only."""
    timezone: str
    """The business's IANA zone (ler's ``scheduleTimezone``): times are shown in it."""
