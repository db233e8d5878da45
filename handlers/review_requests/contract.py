"""Names the infrastructure and the rrs handlers must agree on, and each function's settings.

``components/systems/review_requests.py`` declares the tables from the ``TableSpec`` records
and builds every function's environment from its settings record below, so a table, index or
variable renamed here changes the infra and the code that reads it together. The handlers read
their settings with ``handlers.common.settings.current(<Function>Settings)``: no defaults, a
missing variable fails at the first call, naming it. No Pulumi here: this ships in the zips.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from handlers.common.settings import Settings
from handlers.common.tables import Index, Key, TableSpec

# Functions ------------------------------------------------------------------------------
WEBHOOK: Final = "rrs-webhook"
SENDER: Final = "rrs-sender"
ESCALATOR: Final = "rrs-escalator"
SYNC: Final = "rrs-sync"
SWEEP: Final = "rrs-sweep"

# Tables -----------------------------------------------------------------------------------
REQUESTS_INDEX: Final = "state-due"
"""GSI of rrs-requests: partition ``state``, sort ``due`` (ISO-8601 UTC, sorts as time)."""
REQUESTS_TTL: Final = "expires_at"
"""TTL attribute of rrs-requests: the retention timestamp (epoch seconds)."""

JOBS_TTL: Final = "expires_at"
"""TTL attribute of rrs-jobs: its request's expiry (epoch seconds)."""
JOBS: Final = TableSpec("rrs-jobs", Key("customer_id"), Key("job_ts"), ttl_attribute=JOBS_TTL)
REQUESTS: Final = TableSpec(
    "rrs-requests",
    Key("request_id"),
    indexes=(Index(REQUESTS_INDEX, Key("state"), Key("due")),),
    ttl_attribute=REQUESTS_TTL,
)
CUSTOMERS_TTL: Final = "expires_at"
"""TTL attribute of rrs-customers: ``customer_days`` after the row's last write (epoch seconds)."""
CUSTOMERS: Final = TableSpec("rrs-customers", Key("customer_id"), ttl_attribute=CUSTOMERS_TTL)
OPTOUT: Final = TableSpec("rrs-optout", Key("contact"))
AUDIT_TTL: Final = "expires_at"
"""TTL attribute of rrs-audit: ``retention_days`` after the entry was written (epoch seconds)."""
AUDIT: Final = TableSpec("rrs-audit", Key("request_id"), Key("ts"), ttl_attribute=AUDIT_TTL)
TABLES: Final = (JOBS, REQUESTS, CUSTOMERS, OPTOUT, AUDIT)
DEGRADABLE: Final = (("ModelRefused", SENDER),)
"""(kind, function) of every fallback rrs notes in rrs-requests for the owner's daily notice
(handlers/common/degradations.py; rrs-sweep enqueues it, rrs-escalator mails it)."""

# Queues, schedules, secrets ---------------------------------------------------------------
WORK_QUEUE: Final = "rrs-work"
"""``send`` messages, consumed by rrs-sender."""
ESCALATIONS_QUEUE: Final = "rrs-escalations"
"""``escalate`` messages, consumed by rrs-escalator."""
REQUEST_SCHEDULES_DLQ: Final = "rrs-request-schedules-dlq"
"""Where Scheduler puts a per-request ask it could not deliver to rrs-work."""
REQUEST_SCHEDULE_GROUP: Final = "rrs-requests"
"""Schedule group of the one-off per-request schedules rrs-webhook creates."""
REQUEST_SCHEDULES_ROLE: Final = "rrs-request-schedules-role"
"""The role those schedules send to rrs-work with."""
WEBHOOK_SECRET: Final = "rrs-webhook-secret"
"""The job tool's webhook signing secret (plain string)."""
FORGET_SALT: Final = "rrs-forget-salt"
"""Salt of the hashes ``make forget`` leaves on rrs-optout for a person erased here
(handlers/common/privacy.py ``salted``), so a later job of theirs asks nobody."""
MESSAGING_KEY: Final = "rrs-messaging-key"
"""The keyring of the feedback link's signed ref token."""

# Work messages ----------------------------------------------------------------------------
SEND: Final = "send"
"""Kind of the rrs-work messages: ask this request's customer now."""
ESCALATE: Final = "escalate"
"""Kind of the rrs-escalations messages: hand this request over to the owner."""
WORK_MESSAGE_VERSION: Final = 1
"""Format version of a work message of either kind, on a queue or in an ask schedule's input
(``handlers.common.formats``)."""
DEGRADED_REASON: Final = "degraded"
"""The reason of the ``escalate`` message that asks for the owner's notice of degradations."""
NOTICES_ID: Final = "owner-notices"
"""Its request id: the rrs-audit partition holding every notice's claim and sent markers."""


# Settings, one record per function ----------------------------------------------------------


@dataclass(frozen=True)
class WebhookSettings(Settings):
    """rrs-webhook: the tables it writes, the per-request schedules, the escalations queue."""

    requests_table: str
    customer_days: int
    """rrs-customers' rows expire this long after their last write."""
    jobs_table: str
    customers_table: str
    optout_table: str
    audit_table: str
    escalations_queue_url: str
    opening_start: str
    opening_end: str
    opening_timezone: str
    phone_region: str
    messaging_key_secret_id: str
    webhook_secret_id: str
    forget_salt_secret_id: str
    schedule_group: str
    schedule_role_arn: str
    work_queue_arn: str
    schedule_dlq_arn: str
    request_delay_hours: int
    retention_days: int


@dataclass(frozen=True)
class SenderSettings(Settings):
    """rrs-sender: state and opt-out re-checks, the two models, the ask's channels and links."""

    requests_table: str
    retention_days: int
    """rrs-audit's entries expire this long after they are written."""
    optout_table: str
    audit_table: str
    escalations_queue_url: str
    opening_start: str
    opening_end: str
    opening_timezone: str
    messaging_key_secret_id: str
    sender_email: str
    grade_model_id: str
    compose_model_id: str
    sms_origination_identity: str
    daily_model_calls: int
    daily_sms: int
    review_url: str
    feedback_url: str
    business_name: str
    link_ttl_days: int
    sender_name: str | None
    reply_to_email: str | None


@dataclass(frozen=True)
class EscalatorSettings(Settings):
    """rrs-escalator: what the owner's handover is built from, and where it goes."""

    requests_table: str
    customer_days: int
    """rrs-customers' rows expire this long after their last write."""
    retention_days: int
    """rrs-audit's entries expire this long after they are written."""
    customers_table: str
    jobs_table: str
    audit_table: str
    sender_email: str
    owner_email: str
    alert_email: str
    """Who deployed the stack (``alertEmail``): the fix of a degradation goes there."""
    business_name: str
    claim_lease_seconds: int
    opening_timezone: str
    """The business's zone: the handover's times are shown in it."""


@dataclass(frozen=True)
class SyncSettings(Settings):
    """rrs-sync: the sheet (None: no sheet configured) and its mirror."""

    customers_table: str
    customer_days: int
    """Its rows expire this long after their last write (a row still in the sheet is written
    again by the next sync)."""
    phone_region: str
    sheet_source: str | None


@dataclass(frozen=True)
class SweepSettings(Settings):
    """rrs-sweep: the stragglers index, both queues, the opening-hours gate."""

    requests_table: str
    requests_index: str
    work_queue_url: str
    escalations_queue_url: str
    opening_start: str
    opening_end: str
    opening_timezone: str
    sweep_grace_minutes: int
    sweep_max_attempts: int
