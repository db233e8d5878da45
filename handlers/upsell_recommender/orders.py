"""Orders (upsr-order): the Shopify orders/create webhook (public Function URL).

Authenticity first: the HMAC of the raw body is checked before anything else is read. Then,
fast and without the catalogue or the model: the shop and topic headers, the order itself, the
replay horizon, the gate (opt-out, consent, frequency cap), one conditional write of the order
id to upsr-orders, the purchase history, and one suggest job on upsr-jobs.

Exactly one job per order, even when Shopify delivers the webhook three times or the function
dies between the marker and the enqueue:

* the order item is created only if absent (first delivery wins), with ``job_state=pending``;
* after the job is sent, ``pending -> enqueued``;
* a duplicate finding ``pending`` older than this function's timeout knows the first attempt is
  no longer running: it takes over with a conditional write on ``job_claimed_at`` (one taker)
  and sends the job itself. A duplicate finding ``enqueued``, or a fresh ``pending``, does
  nothing. The picker's one-offer-per-order write backs this up.

Replays: Shopify signs only the body, with no timestamp, so a captured delivery verifies forever.
The body's ``created_at`` is signed, so an order older than ``webhook_max_age_hours`` (beyond
Shopify's retry horizon) is refused as a replay; a replay inside it is a duplicate and changes
nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError
from pydantic import ValidationError

from handlers.common import function_url as http
from handlers.common import metrics
from handlers.common.aws_clients import client, table
from handlers.common.degradations import Ledger
from handlers.common.dynamo_limits import Unstorable, check_item
from handlers.common.forgotten import stack_salt
from handlers.common.observability import get_logger
from handlers.common.secrets import get_secret
from handlers.common.transitions import condition_failed, put_if_absent, transition
from handlers.common.webhook_signatures import SHOPIFY_HMAC_HEADER, SignedWebhook
from handlers.upsell_recommender.contract import OFFERS_KEY, OFFERS_TTL, ORDER, ORDERS_TTL
from handlers.upsell_recommender.customers import (
    get_customer,
    is_forgotten,
    is_opted_out,
    owned_skus,
    record_purchase,
)
from handlers.upsell_recommender.gate import Gate, gate_order
from handlers.upsell_recommender.jobs import JobContact, JobLine, SuggestJob
from handlers.upsell_recommender.shopify_auth import webhook_key
from handlers.upsell_recommender.webhook import PayloadError, parse_order

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

    from handlers.upsell_recommender.contract import OrderSettings
    from handlers.upsell_recommender.gate import Gate
    from handlers.upsell_recommender.webhook import OrderEvent

TOPIC_HEADER = "x-shopify-topic"
SHOP_HEADER = "x-shopify-shop-domain"
ORDERS_CREATE = "orders/create"
PENDING, ENQUEUED, NO_JOB = "pending", "enqueued", "none"
SHOPIFY = SignedWebhook(SHOPIFY_HMAC_HEADER, "base64", "the webhook signature is not valid")
"""Shopify signs the raw body with the app's client secret, base64 in X-Shopify-Hmac-SHA256
("Verify webhook deliveries", https://shopify.dev/docs/apps/build/webhooks/verify-deliveries)."""


@dataclass(frozen=True)
class OrderDeps:
    """What upsr-order touches.

    Attributes:
        orders: upsr-orders (conditional writes only).
        customers: upsr-customers (cap and history read; history ADD).
        optout: upsr-optout (read).
        send_job: Puts one message body on upsr-jobs.
        webhook_secret: The Shopify signing secret (fetched at call time, cached briefly).
        store_domain: The one shop whose webhooks are accepted.
        max_age_s: Replay horizon on the order's ``created_at``.
        max_nudges: Nudges allowed per 30 days.
        stale_pending_s: A ``pending`` order older than this was abandoned by its invocation.
        ledger: Where a redacted customer is noted for the owner's roll-up (upsr-offers).
        order_s: How long an order's marker lives (upsr-orders' TTL, ``orderDays``).
        customer_s: How long a customer's history lives after their last order
            (upsr-customers' TTL, ``customerDays``).
        forget_salt: The stack's salt of the hashes a forgotten person leaves on upsr-optout.
    """

    orders: Table
    customers: Table
    optout: Table
    send_job: Callable[[str], None]
    webhook_secret: Callable[[], str]
    store_domain: str
    max_age_s: int
    max_nudges: int
    stale_pending_s: int
    ledger: Ledger
    order_s: int
    customer_s: int
    forget_salt: Callable[[], str | None] | None = None

    @classmethod
    def from_settings(cls, config: OrderSettings) -> OrderDeps:
        queue_url = config.jobs_queue_url
        secret_id = config.webhook_secret_id

        def send_job(body: str) -> None:
            client("sqs").send_message(QueueUrl=queue_url, MessageBody=body)

        return cls(
            orders=table(config.orders_table),
            customers=table(config.customers_table),
            optout=table(config.optout_table),
            send_job=send_job,
            webhook_secret=lambda: webhook_key(get_secret(secret_id)),
            store_domain=config.store_domain.lower(),
            max_age_s=config.webhook_max_age_hours * 3600,
            max_nudges=config.max_nudges_per_30_days,
            stale_pending_s=config.order_timeout_s + 5,
            ledger=Ledger(table(config.offers_table), OFFERS_KEY, OFFERS_TTL),
            order_s=config.order_days * 86400,
            customer_s=config.customer_days * 86400,
            forget_salt=lambda: stack_salt(config.forget_salt_secret_id),
        )


def shopify_refusal(request: http.Request, secret: str, store_domain: str) -> dict[str, Any] | None:
    """The 4xx for a delivery Shopify did not sign (401), not POSTed, or from another shop; None
    for one this shop's app may read. Shared by every upsr webhook (orders, compliance)."""
    refused = SHOPIFY.refusal(request, secret, now=0.0)  # base64 HMAC: no timestamp to check
    if refused is not None:
        return refused
    if request.method != "POST":
        return http.json_error(405, "method_not_allowed", "webhooks are POSTed")
    shop = (request.headers.get(SHOP_HEADER) or "").strip().lower()
    if shop != store_domain:
        return http.json_error(403, "unknown_shop", "this endpoint serves another shop")
    return None


def handle(request: http.Request, deps: OrderDeps, *, now: float) -> dict[str, Any]:
    """Answer one webhook delivery; every refusal is a 4xx that wrote nothing."""
    log = get_logger()
    refused = shopify_refusal(request, deps.webhook_secret(), deps.store_domain)
    if refused is not None:
        return refused
    if request.headers.get(TOPIC_HEADER) != ORDERS_CREATE:
        return http.json_error(400, "unsupported_topic", f"only {ORDERS_CREATE} is handled")

    try:
        order = parse_order(request.json_object())
    except http.RequestError as err:
        return err.response()
    except PayloadError as err:
        return http.json_error(400, "invalid_order", str(err))
    if now - order.created_at > deps.max_age_s:
        log.warning("stale order refused as a replay", extra={"order_id": order.order_id})
        return http.json_error(401, "stale_webhook", "the order is older than the replay horizon")
    log.append_keys(order_id=order.order_id)
    if request.check:
        # make verify's synthetic order, signed like Shopify's: the real path to the marker,
        # with no customer (so no job, no nudge, no history), the marker marked as a check.
        return accept(replace(order, customer_id=None, contact=None), deps, now, check=True)
    return accept(order, deps, now)


def accept(order: OrderEvent, deps: OrderDeps, now: float, *, check: bool = False) -> dict[str, Any]:
    """Gate, mark and enqueue an authentic order (the exactly-once part)."""
    customer = get_customer(deps.customers, order.customer_id) if order.customer_id else None
    opted_out = is_opted_out(deps.optout, order.customer_id) if order.customer_id else False
    known = [v for v in (order.customer_id, order.contact.address if order.contact else None) if v]
    salt = deps.forget_salt() if known and deps.forget_salt is not None else None
    if not opted_out and salt:
        opted_out = is_forgotten(deps.optout, salt, known)
    outcome = gate_order(
        customer_id=order.customer_id,
        has_contact=order.contact is not None,
        has_skus=bool(order.lines),
        opted_out=opted_out,
        customer=customer,
        now=now,
        max_nudges=deps.max_nudges,
        redacted=order.redacted,
    )
    eligible = outcome is Gate.ELIGIBLE
    # Everything the marker promises is built and checked before the marker is written: the
    # job (the picker's own model) and the order item (DynamoDB's limits). An order that can
    # never become a job is a 422 that wrote nothing, not a pending marker failing forever.
    try:
        job = _job_body(order, customer) if eligible else None
        item = _order_item(order, outcome, now, deps.order_s)
        if check:
            item["check"] = True
        check_item(item)
    except (ValidationError, Unstorable) as err:
        get_logger().warning("order refused before the marker", extra={"error": str(err)[:300]})
        return http.json_error(422, "order_out_of_range", "the order has values this shop's offers cannot use")
    marker = put_if_absent(deps.orders, item, "order_id")
    if not marker.won:
        return _duplicate(order, marker.existing or {}, customer, deps, now)
    if not check:  # make verify's order proves the path; it is not business
        metrics.count("Orders")

    log = get_logger()
    log.info("order gated", extra={"outcome": outcome.value})
    if outcome is Gate.REDACTED:
        _note_redacted(deps, now)
    if job is not None:
        _enqueue(order, job, deps, now)
    if order.customer_id and outcome is not Gate.OPTED_OUT:
        # After the job: the job matters more than history, which the next order repeats.
        try:
            _record_history(order, deps, now)
        except Exception:
            log.exception("purchase history not recorded; the next delivery repeats it")
    return http.json_response(200, {"status": "accepted", "outcome": outcome.value, **({"check": True} if check else {})})


def _note_redacted(deps: OrderDeps, now: float) -> None:
    """Count and note a redacted customer (first delivery only: the marker was won)."""
    metrics.degraded(metrics.CUSTOMER_REDACTED)
    deps.ledger.note(metrics.CUSTOMER_REDACTED, ORDER, now)


def _record_history(order: OrderEvent, deps: OrderDeps, now: float) -> None:
    """Add the order's SKUs to the customer's history (idempotent), then mark the order so a
    duplicate knows it is done; a crash between the two repeats only the idempotent ADD."""
    assert order.customer_id is not None
    record_purchase(
        deps.customers,
        order.customer_id,
        (line.sku for line in order.lines),
        now,
        expires_at=int(now) + deps.customer_s,
    )
    deps.orders.update_item(
        Key={"order_id": order.order_id},
        UpdateExpression="SET history_at = :now",
        ExpressionAttributeValues={":now": int(now)},
    )


def _order_item(order: OrderEvent, outcome: Gate, now: float, keep_s: int) -> dict[str, Any]:
    pending = outcome is Gate.ELIGIBLE
    item: dict[str, Any] = {
        "order_id": order.order_id,
        ORDERS_TTL: int(now) + keep_s,
        "order_name": order.name,
        "created_at": order.created_at,
        "received_at": int(now),
        "outcome": outcome.value,
        "job_state": PENDING if pending else NO_JOB,
        "subtotal": order.subtotal,
        "basket": [
            {"sku": line.sku, "quantity": line.quantity, "price": line.price}
            for line in order.lines
        ],
    }
    if order.customer_id:
        item["customer_id"] = order.customer_id
    if pending:
        item["job_claimed_at"] = int(now)
    return item


def _job_body(order: OrderEvent, customer: Mapping[str, Any] | None) -> str:
    assert order.contact is not None and order.customer_id is not None
    job = SuggestJob(
        order_id=order.order_id,
        customer_id=order.customer_id,
        ordered_at=order.created_at,
        currency=order.currency,
        subtotal=order.subtotal,
        basket=tuple(
            JobLine(sku=line.sku, title=line.title, quantity=line.quantity, price=line.price)
            for line in order.lines
        ),
        history=owned_skus(customer),
        contact=JobContact(
            channel=order.contact.channel,
            address=order.contact.address,
            first_name=order.contact.first_name,
        ),
    )
    return json.dumps(job.model_dump(mode="json"), separators=(",", ":"))


def _enqueue(order: OrderEvent, job: str, deps: OrderDeps, now: float) -> None:
    """Send the job, then record that it was sent (pending -> enqueued)."""
    deps.send_job(job)
    transition(
        deps.orders,
        {"order_id": order.order_id},
        "job_state",
        PENDING,
        ENQUEUED,
        {"enqueued_at": int(now)},
    )


def _duplicate(
    order: OrderEvent,
    existing: Mapping[str, Any],
    customer: Mapping[str, Any] | None,
    deps: OrderDeps,
    now: float,
) -> dict[str, Any]:
    """A delivery of an order already seen: nothing, unless its job was abandoned."""
    log = get_logger()

    if order.customer_id and "history_at" not in existing and existing.get("outcome") != Gate.OPTED_OUT.value:
        # The first delivery died before the history was recorded (its last write): finish it.
        _record_history(order, deps, now)
    claimed_at = int(existing.get("job_claimed_at", 0))
    abandoned = existing.get("job_state") == PENDING and now - claimed_at > deps.stale_pending_s
    if not abandoned or order.contact is None or order.customer_id is None:
        log.info("duplicate delivery ignored", extra={"job_state": existing.get("job_state")})
        return http.json_response(200, {"status": "duplicate"})
    if not _take_over(deps.orders, order.order_id, claimed_at, now):
        return http.json_response(200, {"status": "duplicate"})
    log.warning("re-enqueueing a job its first attempt never confirmed")
    _enqueue(order, _job_body(order, customer), deps, now)
    return http.json_response(200, {"status": "requeued"})


def _take_over(orders: Table, order_id: str, claimed_at: int, now: float) -> bool:
    """Claim an abandoned pending job; exactly one concurrent duplicate wins."""
    try:
        orders.update_item(
            Key={"order_id": order_id},
            UpdateExpression="SET job_claimed_at = :now",
            ConditionExpression="job_state = :pending AND job_claimed_at = :seen",
            ExpressionAttributeValues={":now": int(now), ":pending": PENDING, ":seen": claimed_at},
        )
    except ClientError as err:
        if not condition_failed(err):
            raise
        return False
    return True
