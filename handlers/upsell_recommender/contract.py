"""Names the infrastructure and the handlers of the upsell recommender agree on.

``components/systems/upsell_recommender.py`` declares its tables, queue and secrets from these
records and builds each function's environment from its settings record, so a renamed table or
a new setting changes the infra, the handler and the tests together. No Pulumi here: this
module ships in the function archives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from handlers.common.settings import Settings
from handlers.common.tables import Index, Key, TableSpec

ORDER: Final = "upsr-order"
PICKER: Final = "upsr-picker"
SENDER: Final = "upsr-sender"
ADDLINK: Final = "upsr-addlink"
SWEEP: Final = "upsr-sweep"
CATALOG_SYNC: Final = "upsr-catalog-sync"
COMPLIANCE: Final = "upsr-compliance"
"""Shopify's compliance webhooks: customers/redact, customers/data_request, shop/redact."""

OFFERS_INDEX: Final = "state-send_at"
"""GSI of upsr-offers: partition ``state``, sort ``send_at`` (epoch seconds)."""
OFFERS_TTL: Final = "expires_at"
"""TTL attribute of upsr-offers: end of the attribution window plus the retention period."""
OFFERS_KEY: Final = "offer_id"
DEGRADABLE: Final = (
    ("CustomerRedacted", ORDER),
    ("ModelRefused", PICKER),
)
"""(kind, function) of every fallback upsr notes in upsr-offers for the owner's roll-up."""

ORDERS_TTL: Final = "expires_at"
"""TTL attribute of upsr-orders: ``order_days`` after the order arrived (epoch seconds)."""
ORDERS: Final = TableSpec("upsr-orders", Key("order_id"), ttl_attribute=ORDERS_TTL)
"""One marker per order id (first delivery wins), with its job state."""
OFFERS: Final = TableSpec(
    "upsr-offers",
    Key(OFFERS_KEY),
    indexes=(Index(OFFERS_INDEX, Key("state"), Key("send_at", "N")),),
    ttl_attribute=OFFERS_TTL,
)
"""One offer (or no-fit record) per order, and the sweep's daily report markers."""
CATALOGUE: Final = TableSpec("upsr-catalogue", Key("sku"))
CUSTOMERS_TTL: Final = "expires_at"
"""TTL attribute of upsr-customers: ``customer_days`` after the last order (epoch seconds)."""
CUSTOMERS: Final = TableSpec("upsr-customers", Key("customer_id"), ttl_attribute=CUSTOMERS_TTL)
"""Purchase history and nudge stamps (the frequency cap)."""
OPTOUT: Final = TableSpec("upsr-optout", Key("customer_id"))

JOBS: Final = "upsr-jobs"
"""The suggest-job queue: upsr-order sends, upsr-picker consumes."""
WEBHOOK_SECRET: Final = "upsr-webhook-secret"
STORE_KEY: Final = "upsr-store-key"
ADDLINK_KEY: Final = "upsr-addlink-key"
FORGET_SALT: Final = "upsr-forget-salt"
"""Salt of the hashes ``make forget`` and customers/redact leave on upsr-optout for a person
erased here (handlers/common/privacy.py ``salted``), so a later order of theirs nudges nobody."""


@dataclass(frozen=True)
class OrderSettings(Settings):
    """upsr-order's environment."""

    orders_table: str
    offers_table: str
    """Only for the degradation note of a redacted customer (handlers/common/degradations.py)."""
    customers_table: str
    optout_table: str
    store_domain: str
    max_nudges_per_30_days: int
    webhook_secret_id: str
    jobs_queue_url: str
    webhook_max_age_hours: int
    forget_salt_secret_id: str
    order_timeout_s: int
    """The function's own timeout: a ``pending`` order older than it was abandoned."""
    order_days: int
    """upsr-orders' markers expire this long after the order arrived."""
    customer_days: int
    """upsr-customers' history expires this long after the customer's last order."""


@dataclass(frozen=True)
class PickerSettings(Settings):
    """upsr-picker's environment."""

    offers_table: str
    catalogue_table: str
    attribution_window_hours: int
    offer_retention_days: int
    picker_model_id: str
    daily_model_calls: int
    nudge_delay_minutes: int
    max_price_ratio: float
    catalogue_max_age_hours: int
    jobs_max_receives: int
    """upsr-jobs' maxReceiveCount: the last receive ends a throttled job as no-fit."""


@dataclass(frozen=True)
class AddlinkSettings(Settings):
    """upsr-addlink's environment."""

    offers_table: str
    store_domain: str
    addlink_key_secret_id: str
    business_name: str
    website_url: str | None


@dataclass(frozen=True)
class SenderSettings(Settings):
    """upsr-sender's environment."""

    offers_table: str
    offers_index: str
    customers_table: str
    optout_table: str
    attribution_window_hours: int
    offer_retention_days: int
    max_nudges_per_30_days: int
    addlink_key_secret_id: str
    addlink_url: str
    sms_origination_identity: str
    daily_sms: int
    sender_email: str
    link_grace_days: int
    business_name: str
    sender_name: str | None
    reply_to_email: str | None


@dataclass(frozen=True)
class SweepSettings(Settings):
    """upsr-sweep's environment."""

    offers_table: str
    offers_index: str
    attribution_window_hours: int
    offer_retention_days: int
    sender_email: str
    owner_email: str
    report_hour: int
    report_timezone: str
    quiet_report: str
    alert_email: str
    """Who deployed the stack (``alertEmail``): the fix of a fallback goes there."""


@dataclass(frozen=True)
class CatalogSyncSettings(Settings):
    """upsr-catalog-sync's environment."""

    catalogue_table: str
    store_domain: str
    store_key_secret_id: str
    shopify_api_version: str


@dataclass(frozen=True)
class ComplianceSettings(Settings):
    """upsr-compliance's environment: every upsr table (a redaction searches and deletes), the
    Shopify signing secret, and the owner's mail (a data request's answer)."""

    orders_table: str
    offers_table: str
    customers_table: str
    optout_table: str
    catalogue_table: str
    store_domain: str
    webhook_secret_id: str
    forget_salt_secret_id: str
    sender_email: str
    owner_email: str
