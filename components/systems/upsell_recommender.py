"""Upsell recommender (document 003): after an order, one fitting add-on and one nudge.

Six functions, each with its own role scoped to what the document lets it touch:

* ``upsr-order`` (public Function URL, Shopify HMAC checked in-function): dedup on
  ``upsr-orders``, opt-out and cap gate, enqueue a suggest job on ``upsr-jobs``.
* ``upsr-picker`` (SQS ``upsr-jobs``): the only Bedrock caller; model shortlist, then the
  deterministic catalogue filters; writes one offer (or a no-fit record) to ``upsr-offers``.
* ``upsr-sender`` (schedule): due offers from the state/send_at index, guarded flip
  chosen -> sent, cap stamp, one nudge by SMS (End User Messaging) or SES email.
* ``upsr-addlink`` (public Function URL, signed token checked in-function): records the tap
  and redirects to the store's add-to-cart URL.
* ``upsr-sweep`` (schedule): closes sent offers past the window as ignored; daily roll-up
  to the owner by SES.
* ``upsr-catalog-sync`` (schedule): Shopify Admin API product list into ``upsr-catalogue``.

Decisions the document leaves open are listed in README.md, "Upsell recommender (upsr)".
"""

from __future__ import annotations

from typing import cast

import pulumi

from components.config import UpsrSettings
from components.grants import Grant
from components.guarded_table import GuardedTable, GuardedTableArgs, Index, Key
from components.models import model_grant
from components.scheduled_job import ScheduledJob, ScheduledJobArgs, schedule_group
from components.scoped_lambda import (
    FunctionUrl,
    QueueTrigger,
)
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import System, SystemArgs
from components.systems.legacy_factory import FunctionFactory
from components.work_queue import WorkQueue, WorkQueueArgs

PACKAGE = "handlers.upsell_recommender"
OFFERS_INDEX = "state-send_at"
"""GSI of upsr-offers: partition ``state``, sort ``send_at`` (epoch seconds)."""
OFFERS_TTL = "expires_at"
"""TTL attribute of upsr-offers: end of the attribution window plus the retention period."""

# Memory and timeouts: the document gives none. Public surfaces answer in well under a second
# (Shopify waits 5 s); the picker holds one model call with bounded retries; the batch jobs
# page through DynamoDB or the Admin API.
SIZES: dict[str, tuple[int, int]] = {
    "upsr-order": (256, 10),
    "upsr-picker": (512, 60),
    "upsr-sender": (256, 120),
    "upsr-addlink": (256, 10),
    "upsr-sweep": (256, 120),
    "upsr-catalog-sync": (256, 300),
}
JOBS_VISIBILITY_S = 6 * SIZES["upsr-picker"][1]
"""AWS's guidance for SQS event sources: six times the consumer's timeout."""
PICKER_CONCURRENCY = 5
"""At most five picker invocations at once, so a burst of orders cannot flood Bedrock."""


def _sms_identity(value: str) -> tuple[str, str]:
    """``pool/pool-abc`` -> (``pool``, ``pool-abc``), the parts of the SMS resource ARN."""
    kind, _, identifier = value.partition("/")
    return kind, identifier


class UpsellRecommender(System):
    """The upsell recommender: six functions, five tables, one queue, three schedules."""

    def __init__(
        self,
        resource_name: str,
        args: SystemArgs[UpsrSettings],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("UpsellRecommender", resource_name, opts)
        d, s = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)

        # Data ------------------------------------------------------------------------------
        orders = GuardedTable(
            "upsr-orders", GuardedTableArgs(d, "upsr-orders", Key("order_id")), child
        )
        offers = GuardedTable(
            "upsr-offers",
            GuardedTableArgs(
                d,
                "upsr-offers",
                Key("offer_id"),
                indexes=(Index(OFFERS_INDEX, Key("state"), Key("send_at", "N")),),
                ttl_attribute=OFFERS_TTL,
            ),
            child,
        )
        catalogue = GuardedTable(
            "upsr-catalogue", GuardedTableArgs(d, "upsr-catalogue", Key("sku")), child
        )
        customers = GuardedTable(
            "upsr-customers", GuardedTableArgs(d, "upsr-customers", Key("customer_id")), child
        )
        optout = GuardedTable(
            "upsr-optout", GuardedTableArgs(d, "upsr-optout", Key("customer_id")), child
        )
        jobs = WorkQueue(
            "upsr-jobs",
            WorkQueueArgs(
                d, "upsr-jobs", max_receive_count=5, visibility_timeout_s=JOBS_VISIBILITY_S
            ),
            child,
        )

        # Secrets: one per purpose, so each GetSecretValue grant names one secret -----------
        webhook_secret = SecretSlot(
            "upsr-webhook-secret",
            SecretSlotArgs(
                d,
                "upsr-webhook-secret",
                "Shopify webhook signing key: the app's client secret, plain string or the same "
                '{"client_id", "client_secret"} JSON as upsr-store-key',
            ),
            child,
        )
        store_key = SecretSlot(
            "upsr-store-key",
            SecretSlotArgs(
                d,
                "upsr-store-key",
                'Shopify Dev Dashboard app {"client_id": ..., "client_secret": ...} (scopes '
                "read_products, read_inventory; tokens by client-credentials grant), or a "
                "legacy static Admin API token",
            ),
            child,
        )
        addlink_key = SecretSlot(
            "upsr-addlink-key",
            SecretSlotArgs(
                d,
                "upsr-addlink-key",
                'Add-link token keyring, JSON {"active_kid": "k1", "keys": {"k1": "<32+ chars>"}}',
            ),
            child,
        )

        sender_identity = d.sender_identity_arn(s.sender_email)
        kind, identifier = _sms_identity(s.sms_origination_identity)
        sms_arn = d.arns.sms_resource(kind, identifier)
        common_env = {
            "UPSR_ORDERS_TABLE": orders.physical_name,
            "UPSR_OFFERS_TABLE": offers.physical_name,
            "UPSR_OFFERS_INDEX": OFFERS_INDEX,
            "UPSR_CATALOGUE_TABLE": catalogue.physical_name,
            "UPSR_CUSTOMERS_TABLE": customers.physical_name,
            "UPSR_OPTOUT_TABLE": optout.physical_name,
            "UPSR_STORE_DOMAIN": s.store_domain,
            "UPSR_ATTRIBUTION_WINDOW_HOURS": str(s.attribution_window_hours),
            "UPSR_OFFER_RETENTION_DAYS": str(s.offer_retention_days),
            "UPSR_MAX_NUDGES_PER_30_DAYS": str(s.max_nudges_per_30_days),
        }

        # domain.py checks every contact with handlers.common.emails / phones.
        checks = ("email-validator", "idna", "phonenumberslite")
        function = FunctionFactory(d, PACKAGE, SIZES, common_env, child, vendored=checks)

        # Functions -------------------------------------------------------------------------
        order_fn = function(
            "upsr-order",
            "Shopify orders/create webhook: verify, dedup, gate, enqueue one suggest job",
            "order",
            (
                webhook_secret.grant_read(),
                orders.grant_conditional_write(sid="OneOrderMarker"),
                optout.grant("dynamodb:GetItem", sid="CheckOptOut"),
                customers.grant("dynamodb:GetItem", sid="CheckCapAndHistory"),
                customers.grant("dynamodb:UpdateItem", sid="RecordPurchaseHistory"),
                jobs.grant_send(sid="EnqueueSuggestJob"),
            ),
            {
                "UPSR_WEBHOOK_SECRET_ID": webhook_secret.physical_name,
                "UPSR_JOBS_QUEUE_URL": jobs.url,
                "UPSR_WEBHOOK_MAX_AGE_HOURS": str(s.webhook_max_age_hours),
                "UPSR_ORDER_TIMEOUT_S": str(SIZES["upsr-order"][1]),
            },
            uses=(
                "UPSR_ORDERS_TABLE",
                "UPSR_CUSTOMERS_TABLE",
                "UPSR_OPTOUT_TABLE",
                "UPSR_STORE_DOMAIN",
                "UPSR_MAX_NUDGES_PER_30_DAYS",
            ),
            url=FunctionUrl(
                "NONE",
                public_reason="Shopify X-Shopify-Hmac-Sha256 over the raw body, checked first",
            ),
        )
        picker_fn = function(
            "upsr-picker",
            "Suggest jobs: one model shortlist, deterministic catalogue filters, one offer",
            "picker",
            (
                model_grant(d, s.picker_model, sid="InvokePickerModel"),
                catalogue.grant("dynamodb:Scan", "dynamodb:BatchGetItem", sid="ReadCatalogue"),
                offers.grant("dynamodb:PutItem", sid="WriteOneOfferPerOrder"),
            ),
            {
                "UPSR_PICKER_MODEL_ID": s.picker_model.active,
                "UPSR_NUDGE_DELAY_MINUTES": str(s.nudge_delay_minutes),
                "UPSR_MAX_PRICE_RATIO": str(s.max_price_ratio),
                "UPSR_CATALOGUE_MAX_AGE_HOURS": str(s.catalogue_max_age_hours),
                "UPSR_JOBS_MAX_RECEIVES": str(jobs.args.max_receive_count),
            },
            uses=(
                "UPSR_OFFERS_TABLE",
                "UPSR_CATALOGUE_TABLE",
                "UPSR_ATTRIBUTION_WINDOW_HOURS",
                "UPSR_OFFER_RETENTION_DAYS",
            ),
            queues=(QueueTrigger(jobs, batch_size=5, maximum_concurrency=PICKER_CONCURRENCY),),
        )
        addlink_fn = function(
            "upsr-addlink",
            "One-tap add link: verify the signed token, record the tap, 302 to the cart",
            "addlink",
            (
                addlink_key.grant_read(),
                offers.grant("dynamodb:UpdateItem", sid="RecordTap"),
            ),
            {"UPSR_ADDLINK_KEY_SECRET_ID": addlink_key.physical_name},
            uses=("UPSR_OFFERS_TABLE", "UPSR_STORE_DOMAIN"),
            url=FunctionUrl(
                "NONE", public_reason="HMAC-signed, expiring link token checked before any read"
            ),
        )
        assert addlink_fn.function_url is not None
        sender_fn = function(
            "upsr-sender",
            "Due offers: re-check opt-out and cap, flip chosen->sent once, send one nudge",
            "sender",
            (
                offers.grant("dynamodb:Query", indexes=(OFFERS_INDEX,), sid="QueryDueOffers"),
                offers.grant("dynamodb:UpdateItem", sid="FlipOfferState"),
                optout.grant("dynamodb:GetItem", sid="RecheckOptOut"),
                customers.grant("dynamodb:GetItem", "dynamodb:UpdateItem", sid="CheckAndStampCap"),
                addlink_key.grant_read(),
                Grant("SendNudgeSms", ("sms-voice:SendTextMessage",), (sms_arn,)),
                Grant(
                    "SendNudgeEmail",
                    ("ses:SendEmail",),
                    (sender_identity,),
                    {"StringEquals": {"ses:FromAddress": s.sender_email}},
                ),
            ),
            {
                "UPSR_ADDLINK_KEY_SECRET_ID": addlink_key.physical_name,
                # A URL, not a secret: the Output resolves at deploy time. The block types
                # environment values as str; Pulumi accepts an Output in their place.
                "UPSR_ADDLINK_URL": cast(str, addlink_fn.function_url),
                "UPSR_SMS_ORIGINATION_IDENTITY": sms_arn,
                "UPSR_SENDER_EMAIL": s.sender_email,
                "UPSR_LINK_GRACE_DAYS": str(s.link_grace_days),
            },
            uses=(
                "UPSR_OFFERS_TABLE",
                "UPSR_OFFERS_INDEX",
                "UPSR_CUSTOMERS_TABLE",
                "UPSR_OPTOUT_TABLE",
                "UPSR_ATTRIBUTION_WINDOW_HOURS",
                "UPSR_OFFER_RETENTION_DAYS",
                "UPSR_MAX_NUDGES_PER_30_DAYS",
            ),
            invoked_async=True,
        )
        sweep_fn = function(
            "upsr-sweep",
            "Close sent offers past the window as ignored; daily take-up roll-up to the owner",
            "sweep",
            (
                offers.grant("dynamodb:Query", indexes=(OFFERS_INDEX,), sid="QueryOffersByState"),
                offers.grant("dynamodb:UpdateItem", "dynamodb:PutItem", sid="CloseOffersAndMark"),
                Grant(
                    "SendOwnerReport",
                    ("ses:SendEmail",),
                    (sender_identity,),
                    {"StringEquals": {"ses:FromAddress": s.sender_email}},
                ),
            ),
            {
                "UPSR_SENDER_EMAIL": s.sender_email,
                "UPSR_OWNER_EMAIL": s.owner_email,
                "UPSR_REPORT_HOUR": str(s.report_hour),
                "UPSR_REPORT_TIMEZONE": s.report_timezone,
            },
            uses=(
                "UPSR_OFFERS_TABLE",
                "UPSR_OFFERS_INDEX",
                "UPSR_ATTRIBUTION_WINDOW_HOURS",
                "UPSR_OFFER_RETENTION_DAYS",
            ),
            vendored=("tzdata",),  # zoneinfo: the report hour is read in UPSR_REPORT_TIMEZONE
            invoked_async=True,
        )
        sync_fn = function(
            "upsr-catalog-sync",
            "Shopify Admin API product list (stock, price, category, tags) into upsr-catalogue",
            "catalog_sync",
            (
                store_key.grant_read(),
                catalogue.grant("dynamodb:PutItem", sid="UpsertCatalogue"),
            ),
            {
                "UPSR_STORE_KEY_SECRET_ID": store_key.physical_name,
                "UPSR_SHOPIFY_API_VERSION": s.shopify_api_version,
            },
            uses=("UPSR_CATALOGUE_TABLE", "UPSR_STORE_DOMAIN"),
            invoked_async=True,
        )

        # Schedules -------------------------------------------------------------------------
        jobs_group = schedule_group("upsr-schedules", d, d.system, child)
        for name, expression, target, what in (
            ("upsr-sender", s.sender_schedule, sender_fn, "release due offers"),
            ("upsr-sweep", s.sweep_schedule, sweep_fn, "close attribution windows"),
            ("upsr-catalog-sync", s.catalog_sync_schedule, sync_fn, "refresh stock and prices"),
        ):
            ScheduledJob(
                f"{name}-schedule",
                ScheduledJobArgs(d, name, expression, target, jobs_group, description=what),
                child,
            )

        self.finish(
            {
                "order_webhook_url": order_fn.function_url,
                "addlink_url": addlink_fn.function_url,
                "jobs_queue_url": jobs.url,
                "tables": {
                    "orders": orders.physical_name,
                    "offers": offers.physical_name,
                    "catalogue": catalogue.physical_name,
                    "customers": customers.physical_name,
                    "optout": optout.physical_name,
                },
                "secrets": {
                    "webhook_signing_secret": webhook_secret.physical_name,
                    "store_api_key": store_key.physical_name,
                    "addlink_token_key": addlink_key.physical_name,
                },
                "functions": {
                    "picker": picker_fn.physical_name,
                    "sender": sender_fn.physical_name,
                    "sweep": sweep_fn.physical_name,
                    "catalog_sync": sync_fn.physical_name,
                },
            }
        )
