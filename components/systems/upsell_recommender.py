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

Decisions the document leaves open are listed in handlers/upsell_recommender/README.md.
"""

from __future__ import annotations

from typing import cast

import pulumi

from components.config import UpsrSettings
from components.deployment import Deployment
from components.grants import Grant
from components.guarded_table import GuardedTable, GuardedTableArgs
from components.models import model_grant
from components.personal_data import (
    SCHEDULE_EVENTS,
    Holding,
    NoPersonalData,
    PersonalData,
    Retention,
    Suppression,
    function_logs,
    messages,
)
from components.scheduled_job import Schedule
from components.scoped_lambda import FunctionUrl, QueueTrigger, ScopedLambda
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import Build, System, SystemArgs, settings_values
from components.systems.function_factory import FunctionFactory
from components.work_queue import WorkQueue, WorkQueueArgs, consumer_visibility
from handlers.common.tables import TableSpec
from handlers.upsell_recommender import contract

PACKAGE = "handlers.upsell_recommender"

# Memory and timeouts: the document gives none. Public surfaces answer in well under a second
# (Shopify waits 5 s); the picker holds one model call with bounded retries; the batch jobs
# page through DynamoDB or the Admin API.
SIZES: dict[str, tuple[int, int]] = {
    # A public surface answers a caller who waits (Shopify drops a webhook after 5 s): 512 MB,
    # chosen by `make bench-init`: a first invocation costs 240-470 ms of CPU (more as this
    # machine's load grows), which with its AWS waits predicts 1.0-1.8 s here against the
    # 1.5 s target; at 256 MB (a seventh of a vCPU) it would be 2-3.5 s.
    # upsr-order does the most on its first call of them all (boto3 with its resource layer
    # for four tables, two secrets, a phone number parsed, five writes): about 460 ms of CPU,
    # 1.6-1.8 s predicted at 512 MB; at 1,024 MB (0.58 vCPU) about 1.0-1.2 s. The bill barely
    # moves (`make cost`: prod's upsr lambda line unchanged to the cent, dev's month at volume
    # +$0.01; the cost per order unchanged at 1x and 10x, $0.0507 -> $0.0508 at 100x).
    contract.ORDER: (1024, 10),
    contract.PICKER: (512, 60),
    contract.SENDER: (256, 120),
    contract.ADDLINK: (512, 10),  # public surface: see above
    contract.SWEEP: (256, 120),
    contract.CATALOG_SYNC: (256, 300),
    # a redaction reads every upsr table once (a small shop's few thousand items); Shopify
    # waits 5 s for the 2xx, then retries: a retry finds less to erase, never more. Its first
    # call (three clients, four Scans, an export mailed) is about 770 ms of CPU: 2.9 s predicted
    # at 512 MB, about 1.0 s at 1,769 MB (one full vCPU). It runs a few times a year, so the
    # memory costs nothing idle and a fraction of a cent a call.
    contract.COMPLIANCE: (1769, 30),
}
PICKER_CONCURRENCY = 5
"""At most five picker invocations at once, so a burst of orders cannot flood Bedrock."""


class UpsellRecommender(System):
    """The upsell recommender: six functions, five tables, one queue, three schedules."""

    orders: GuardedTable
    offers: GuardedTable
    catalogue: GuardedTable
    customers: GuardedTable
    optout: GuardedTable
    jobs: WorkQueue
    webhook_secret: SecretSlot
    store_key: SecretSlot
    addlink_key: SecretSlot
    sms_arn: str
    order_fn: ScopedLambda
    picker_fn: ScopedLambda
    addlink_fn: ScopedLambda
    sender_fn: ScopedLambda
    sweep_fn: ScopedLambda
    sync_fn: ScopedLambda

    def __init__(
        self,
        resource_name: str,
        args: SystemArgs[UpsrSettings],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("UpsellRecommender", resource_name, opts)
        d, s = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)
        self._data(d, s, child)
        # domain.py checks every contact with handlers.common.emails / phones.
        checks = ("email-validator", "idna", "phonenumberslite")
        function = FunctionFactory(
            d,
            PACKAGE,
            SIZES,
            child,
            vendored=checks,
            logs=function_logs("order ids", "offer ids", "customer ids"),
            failed_events=SCHEDULE_EVENTS,
        )
        self._queues(d, function, child)
        self._secrets(d, child)
        self.sms_arn = d.arns.sms_resource(s.sms_origination_identity)
        values = self._environment(s, function)
        values["alert_email"] = d.alert_email
        b = Build(d, s, function, values)
        self._webhook(b)
        self._picker(b)
        self._addlink(b)
        self._sender(b)
        self._sweep(b)
        self._catalog_sync(b)
        self._compliance(b)
        self._outputs()

    def _data(self, d: Deployment, s: UpsrSettings, child: pulumi.ResourceOptions) -> None:
        """The five tables as the contract declares them."""
        held: dict[TableSpec, Holding] = {
            contract.ORDERS: PersonalData(
                ("Shopify order ids", "customer ids", "the order's handling state"),
                "the first delivery of an order wins: a repeated webhook is not handled twice",
                Retention.setting("upsr", s, "order_days", "past Shopify's 48-hour retries"),
            ),
            contract.OFFERS: PersonalData(
                ("customer ids", "email address or phone number", "first names", "suggested products"),
                "the nudge to send, its one-tap link and its take-up",
                Retention.setting(
                    "upsr", s, "offer_retention_days", "the roll-up reports take-up after the window"
                ),
            ),
            contract.CATALOGUE: NoPersonalData("the shop's products: SKUs, titles, prices, stock"),
            contract.CUSTOMERS: PersonalData(
                ("customer ids", "products bought", "nudge times"),
                "what a customer owns is never suggested; the nudge frequency cap",
                Retention.setting(
                    "upsr", s, "customer_days", "a repeat-order window: refreshed by each order"
                ),
            ),
            contract.OPTOUT: Suppression(
                ("Shopify customer ids",), "an opted-out customer is never nudged again"
            ),
        }
        (
            self.orders,
            self.offers,
            self.catalogue,
            self.customers,
            self.optout,
        ) = (
            GuardedTable(spec.name, GuardedTableArgs.of(d, spec, held[spec]), child)
            for spec in (
                contract.ORDERS,
                contract.OFFERS,
                contract.CATALOGUE,
                contract.CUSTOMERS,
                contract.OPTOUT,
            )
        )

    def _queues(
        self, d: Deployment, function: FunctionFactory, child: pulumi.ResourceOptions
    ) -> None:
        """The suggest-job queue from the webhook to the picker."""
        self.jobs = WorkQueue(
            contract.JOBS,
            WorkQueueArgs(
                d,
                contract.JOBS,
                max_receive_count=5,
                visibility_timeout_s=consumer_visibility(function.timeout(contract.PICKER)),
                personal_data=messages(
                    "order ids",
                    "customer ids",
                    "email address or phone number",
                    "first names",
                    "order lines",
                    why="a suggestion job from upsr-order to upsr-picker",
                ),
            ),
            child,
        )

    def _secrets(self, d: Deployment, child: pulumi.ResourceOptions) -> None:
        """One secret per purpose, so each GetSecretValue grant names one secret."""
        self.webhook_secret = SecretSlot(
            contract.WEBHOOK_SECRET,
            SecretSlotArgs(
                d,
                contract.WEBHOOK_SECRET,
                "Shopify webhook signing key: the app's client secret, plain string or the same "
                '{"client_id", "client_secret"} JSON as upsr-store-key',
            ),
            child,
        )
        self.store_key = SecretSlot(
            contract.STORE_KEY,
            SecretSlotArgs(
                d,
                contract.STORE_KEY,
                'Shopify Dev Dashboard app {"client_id": ..., "client_secret": ...} (scopes '
                "read_products, read_inventory; tokens by client-credentials grant), or a "
                "legacy static Admin API token",
            ),
            child,
        )
        self.addlink_key = SecretSlot(
            contract.ADDLINK_KEY,
            SecretSlotArgs(
                d,
                contract.ADDLINK_KEY,
                'Add-link token keyring, JSON {"active_kid": "k1", "keys": {"k1": "<32+ chars>"}}',
            ),
            child,
        )
        self.forget_salt = SecretSlot(
            contract.FORGET_SALT,
            SecretSlotArgs(
                d,
                contract.FORGET_SALT,
                "Salt of the hashes an erasure leaves on upsr-optout for a person erased here: "
                "64 random characters, generated by make secrets; a new salt forgets the old hashes",
            ),
            child,
        )

    def _environment(
        self, s: UpsrSettings, function: FunctionFactory
    ) -> dict[str, pulumi.Input[str] | int | float]:
        """Every value the six functions' settings read (each takes its own subset)."""
        return {
            **settings_values(s),
            "orders_table": self.orders.physical_name,
            "offers_table": self.offers.physical_name,
            "offers_index": contract.OFFERS_INDEX,
            "catalogue_table": self.catalogue.physical_name,
            "customers_table": self.customers.physical_name,
            "optout_table": self.optout.physical_name,
            "webhook_secret_id": self.webhook_secret.physical_name,
            "forget_salt_secret_id": self.forget_salt.physical_name,
            "jobs_queue_url": self.jobs.url,
            "order_timeout_s": function.timeout(contract.ORDER),
            "picker_model_id": s.picker_model.active,
            "jobs_max_receives": self.jobs.args.max_receive_count,
            "addlink_key_secret_id": self.addlink_key.physical_name,
            "sms_origination_identity": self.sms_arn,
            "store_key_secret_id": self.store_key.physical_name,
        }

    def _webhook(self, b: Build[UpsrSettings]) -> None:
        self.order_fn = b.function(
            contract.ORDER,
            "Shopify orders/create webhook: verify, dedup, gate, enqueue one suggest job",
            (
                self.webhook_secret.grant_read(),
                self.forget_salt.grant_read(),  # a forgotten person's opt-out is a salted hash
                self.orders.grant_conditional_write(sid="OneOrderMarker"),
                self.optout.grant("dynamodb:GetItem", sid="CheckOptOut"),
                self.customers.grant("dynamodb:GetItem", sid="CheckCapAndHistory"),
                self.customers.grant("dynamodb:UpdateItem", sid="RecordPurchaseHistory"),
                self.jobs.grant_send(sid="EnqueueSuggestJob"),
                self.offers.grant_degradation_items(
                    "dynamodb:UpdateItem",
                    [("CustomerRedacted", contract.ORDER)],
                    sid="NoteRedactedCustomer",
                ),
            ),
            contract.OrderSettings.environment(b.values),
            url=FunctionUrl(
                "NONE",
                public_reason="Shopify X-Shopify-Hmac-Sha256 over the raw body, checked first",
                registered_in="Shopify: the app orders/create webhook subscription",
            ),
        )

    def _picker(self, b: Build[UpsrSettings]) -> None:
        self.picker_fn = b.function(
            contract.PICKER,
            "Suggest jobs: one model shortlist, deterministic catalogue filters, one offer",
            (
                model_grant(b.d, b.s.picker_model, sid="InvokePickerModel"),
                self.catalogue.grant("dynamodb:Scan", "dynamodb:BatchGetItem", sid="ReadCatalogue"),
                self.offers.grant("dynamodb:PutItem", sid="WriteOneOfferPerOrder"),
                self.offers.grant_degradation_items(
                    "dynamodb:UpdateItem",
                    [("ModelRefused", contract.PICKER)],
                    sid="NoteRefusedModel",
                ),
                self.offers.grant_spend("model", sid="CountModelCalls"),
            ),
            contract.PickerSettings.environment(b.values),
            queues=(QueueTrigger(self.jobs, batch_size=5, maximum_concurrency=PICKER_CONCURRENCY),),
        )

    def _addlink(self, b: Build[UpsrSettings]) -> None:
        self.addlink_fn = b.function(
            contract.ADDLINK,
            "One-tap add link: verify the signed token, record the tap, 302 to the cart",
            (
                self.addlink_key.grant_read(),
                self.offers.grant("dynamodb:UpdateItem", sid="RecordTap"),
            ),
            contract.AddlinkSettings.environment(b.values),
            url=FunctionUrl(
                "NONE", public_reason="HMAC-signed, expiring link token checked before any read"
            ),
        )
        assert self.addlink_fn.function_url is not None
        # A URL, not a secret: the Output resolves at deploy time. The block types
        # environment values as str; Pulumi accepts an Output in their place.
        b.values["addlink_url"] = cast(str, self.addlink_fn.function_url)

    def _sender(self, b: Build[UpsrSettings]) -> None:
        self.sender_fn = b.function(
            contract.SENDER,
            "Due offers: re-check opt-out and cap, flip chosen->sent once, send one nudge",
            (
                self.offers.grant(
                    "dynamodb:Query", indexes=(contract.OFFERS_INDEX,), sid="QueryDueOffers"
                ),
                self.offers.grant("dynamodb:UpdateItem", sid="FlipOfferState"),
                # Also inside FlipOfferState; named so the counter keeps its keys if that narrows.
                self.offers.grant_spend("sms", sid="CountSms"),
                # ConditionCheckItem: the claim's transaction checks the opt-out's absence.
                self.optout.grant(
                    "dynamodb:GetItem", "dynamodb:ConditionCheckItem", sid="RecheckOptOut"
                ),
                self.customers.grant(
                    "dynamodb:GetItem", "dynamodb:UpdateItem", sid="CheckAndStampCap"
                ),
                self.addlink_key.grant_read(),
                Grant("SendNudgeSms", ("sms-voice:SendTextMessage",), (self.sms_arn,)),
                b.d.grant_send_email("SendNudgeEmail", b.s.sender_email),
            ),
            contract.SenderSettings.environment(b.values),
            schedules=(Schedule(contract.SENDER, b.s.sender_schedule, "release due offers"),),
            vendored=("gsm0338",),  # the nudge is measured in GSM-7 septets (handlers.common.sms)
        )

    def _sweep(self, b: Build[UpsrSettings]) -> None:
        self.sweep_fn = b.function(
            contract.SWEEP,
            "Close sent offers past the window as ignored; daily take-up roll-up to the owner",
            (
                self.offers.grant(
                    "dynamodb:Query", indexes=(contract.OFFERS_INDEX,), sid="QueryOffersByState"
                ),
                # GetItem: the roll-up's high-water mark (the index Query reads every offer already).
                self.offers.grant(
                    "dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem", sid="CloseOffersAndMark"
                ),
                b.d.grant_send_email("SendOwnerReport", b.s.sender_email),
                self.offers.grant_degradation_items(
                    "dynamodb:GetItem",
                    list(contract.DEGRADABLE),
                    sid="ReadDegradationNotes",
                ),
            ),
            contract.SweepSettings.environment(b.values),
            vendored=("tzdata",),  # zoneinfo: the report hour is read in REPORT_TIMEZONE
            schedules=(Schedule(contract.SWEEP, b.s.sweep_schedule, "close attribution windows"),),
        )
        # The sweep reports a claimed message never confirmed sent; a person must look.
        b.d.watch_unconfirmed_sends("UnconfirmedNudges", "nudges claimed and never confirmed sent", self)
        b.d.watch_degradations(self)
        b.d.watch_spend_caps(self)

    def _catalog_sync(self, b: Build[UpsrSettings]) -> None:
        self.sync_fn = b.function(
            contract.CATALOG_SYNC,
            "Shopify Admin API product list (stock, price, category, tags) into upsr-catalogue",
            (
                self.store_key.grant_read(),
                self.catalogue.grant(
                    "dynamodb:PutItem", "dynamodb:UpdateItem", sid="UpsertCatalogue"
                ),
                # The stored content hashes, read first: only changed rows are written.
                self.catalogue.grant("dynamodb:Scan", sid="ReadCatalogueHashes"),
            ),
            contract.CatalogSyncSettings.environment(b.values),
            schedules=(
                Schedule(
                    contract.CATALOG_SYNC, b.s.catalog_sync_schedule, "refresh stock and prices"
                ),
            ),
        )

    def _compliance(self, b: Build[UpsrSettings]) -> None:
        customer_tables = (self.orders, self.offers, self.customers, self.optout)
        self.compliance_fn = b.function(
            contract.COMPLIANCE,
            "Shopify compliance webhooks: erase a customer or the shop, mail a data request to the owner",
            (
                self.webhook_secret.grant_read(),
                self.forget_salt.grant_read(),
                self.optout.grant("dynamodb:PutItem", sid="RememberRedactedAsSaltedHash"),
                # a redaction reads every item of the customer tables and deletes the customer's
                *(t.grant("dynamodb:Scan", "dynamodb:DeleteItem", sid=f"Redact{t.args.name.title().replace('-', '')}") for t in customer_tables),
                # shop/redact empties the catalogue too; DescribeTable gives each table's keys
                self.catalogue.grant("dynamodb:Scan", "dynamodb:DeleteItem", sid="RedactShopCatalogue"),
                *(t.grant("dynamodb:DescribeTable", sid=f"Keys{t.args.name.title().replace('-', '')}") for t in (*customer_tables, self.catalogue)),
                b.d.grant_send_email("SendDataRequestToOwner", b.s.sender_email),
            ),
            contract.ComplianceSettings.environment(b.values),
            url=FunctionUrl(
                "NONE",
                public_reason="Shopify X-Shopify-Hmac-Sha256 over the raw body, checked first",
                registered_in="Shopify: the app compliance webhooks customers/redact "
                "customers/data_request shop/redact",
            ),
            # handlers/common/privacy.py reads the payload's email and phone as the systems do
            vendored=("email-validator", "idna", "phonenumberslite"),
        )

    def _outputs(self) -> None:
        """The operator-facing outputs."""
        self.finish(
            {
                "order_webhook_url": self.order_fn.function_url,
                "addlink_url": self.addlink_fn.function_url,
                "compliance_webhook_url": self.compliance_fn.function_url,
                "jobs_queue_url": self.jobs.url,
                "tables": {
                    "orders": self.orders.physical_name,
                    "offers": self.offers.physical_name,
                    "catalogue": self.catalogue.physical_name,
                    "customers": self.customers.physical_name,
                    "optout": self.optout.physical_name,
                },
                "secrets": {
                    "webhook_signing_secret": self.webhook_secret.physical_name,
                    "store_api_key": self.store_key.physical_name,
                    "addlink_token_key": self.addlink_key.physical_name,
                    "forget_salt": self.forget_salt.physical_name,
                },
                "functions": {
                    "picker": self.picker_fn.physical_name,
                    "sender": self.sender_fn.physical_name,
                    "sweep": self.sweep_fn.physical_name,
                    "catalog_sync": self.sync_fn.physical_name,
                },
            }
        )
