"""Shopify's mandatory compliance webhooks (upsr-compliance, its own public Function URL).

Shopify sends an app three privacy topics, signed like every webhook (X-Shopify-Hmac-SHA256 over
the raw body with the app's client secret), and requires a 401 for a bad signature and a 2xx
to confirm receipt ("Privacy law compliance",
https://shopify.dev/docs/apps/build/compliance/privacy-law-compliance):

* ``customers/redact`` ``{shop_id, shop_domain, customer: {id, email, phone}, orders_to_redact}``:
  erase the customer (and those orders) from upsr: the same search and erasure as
  ``make forget`` (handlers/common/privacy.py, upsr's stores in handlers/upsell_recommender/privacy.py);
* ``customers/data_request`` ``{…, orders_requested, data_request: {id}}``: what upsr holds
  about the customer, mailed to the owner as one JSON document (Shopify expects the app to
  hand it to the merchant, who answers the customer);
* ``shop/redact`` ``{shop_id, shop_domain}``, 48 hours after the app is uninstalled: erase
  every item of every upsr table.

A function of its own, not a route of upsr-order: erasing needs Scan and DeleteItem on every
upsr table, which the order webhook must never hold.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from handlers.common import function_url as http
from handlers.common.aws_clients import client
from handlers.common.forgotten import stack_salt
from handlers.common.html_kit import Html, Mail, esc, mail
from handlers.common.observability import get_logger
from handlers.common.privacy import Person, Where, erase, exported, find
from handlers.common.secrets import get_secret
from handlers.upsell_recommender import contract
from handlers.upsell_recommender.orders import TOPIC_HEADER, shopify_refusal
from handlers.upsell_recommender.privacy import STORES
from handlers.upsell_recommender.shopify_auth import webhook_key
from handlers.upsell_recommender.sweeping import ses_mailer

if TYPE_CHECKING:
    from handlers.upsell_recommender.contract import ComplianceSettings

CUSTOMERS_REDACT = "customers/redact"
CUSTOMERS_DATA_REQUEST = "customers/data_request"
SHOP_REDACT = "shop/redact"
TOPICS = (CUSTOMERS_REDACT, CUSTOMERS_DATA_REQUEST, SHOP_REDACT)


@dataclass(frozen=True)
class ComplianceDeps:
    """What upsr-compliance touches: every upsr table (Scan, DeleteItem), the owner's mail."""

    where: Where
    tables: tuple[str, ...]
    """Every upsr table's physical name (shop/redact empties them all)."""
    webhook_secret: Callable[[], str]
    store_domain: str
    send: Callable[[Mail], None]
    forget_salt: Callable[[], str | None]

    @classmethod
    def from_settings(
        cls, config: ComplianceSettings, *, send: Callable[[Mail], None] | None = None
    ) -> ComplianceDeps:
        names = {
            contract.ORDERS.name: config.orders_table,
            contract.OFFERS.name: config.offers_table,
            contract.CUSTOMERS.name: config.customers_table,
            contract.OPTOUT.name: config.optout_table,
        }
        secret_id = config.webhook_secret_id
        return cls(
            where=Where(names, client("dynamodb"), None),
            tables=(*names.values(), config.catalogue_table),
            webhook_secret=lambda: webhook_key(get_secret(secret_id)),
            store_domain=config.store_domain.lower(),
            send=send or ses_mailer(config.sender_email, config.owner_email),
            forget_salt=lambda: stack_salt(config.forget_salt_secret_id),
        )


def _person(payload: dict[str, Any], orders_field: str) -> Person:
    """The customer and their orders, as the search reads them; ValueError if it names nobody."""
    customer = payload.get("customer")
    if not isinstance(customer, dict):
        raise ValueError("customer is missing")
    ids = [str(customer["id"])] if customer.get("id") is not None else []
    orders = payload.get(orders_field) or []
    if not isinstance(orders, list):
        raise ValueError(f"{orders_field} is not a list")
    ids += [str(o) for o in orders if isinstance(o, int | str)]
    email = customer.get("email") if isinstance(customer.get("email"), str) else None
    phone = customer.get("phone") if isinstance(customer.get("phone"), str) else None
    try:
        return Person.of(email=email or None, phone=phone or None, ids=ids)
    except ValueError:  # an unreadable phone or email: the ids still name them
        return Person.of(ids=ids)


def _empty(deps: ComplianceDeps) -> int:
    """shop/redact: every item of every upsr table deleted. How many."""
    dynamodb, count = deps.where.dynamodb, 0
    for name in deps.tables:
        keys = [k["AttributeName"] for k in dynamodb.describe_table(TableName=name)["Table"]["KeySchema"]]
        for page in dynamodb.get_paginator("scan").paginate(TableName=name):
            for item in page.get("Items", []):
                dynamodb.delete_item(TableName=name, Key={k: item[k] for k in keys})
                count += 1
    return count


def _data_mail(payload: dict[str, Any], found: dict[str, list[Any]]) -> Mail:
    request_id = (payload.get("data_request") or {}).get("id", "")
    document = json.dumps(found, indent=2, sort_keys=True)
    subject = f"Shopify data request {request_id}: what the upsell recommender holds"
    lines = [
        "Shopify forwarded a customer's request for their data. Everything the upsell",
        "recommender holds about them is below, as one JSON document: send it to the customer.",
        "",
        document,
    ]
    return mail(subject, lines, Html(f"<p>{esc(lines[0])} {esc(lines[1])}</p><pre>{esc(document)}</pre>"))


def handle(request: http.Request, deps: ComplianceDeps) -> dict[str, Any]:
    """Answer one compliance webhook; a bad signature is a 401 that read nothing."""
    refused = shopify_refusal(request, deps.webhook_secret(), deps.store_domain)
    if refused is not None:
        return refused
    topic = request.headers.get(TOPIC_HEADER)
    if topic not in TOPICS:
        return http.json_error(400, "unsupported_topic", f"only {', '.join(TOPICS)} are handled")
    try:
        payload = request.json_object()
    except http.RequestError as err:
        return err.response()
    if str(payload.get("shop_domain", "")).lower() != deps.store_domain:
        return http.json_error(403, "unknown_shop", "the payload names another shop")
    log = get_logger()
    if topic == SHOP_REDACT:
        erased = _empty(deps)
        log.info("shop redacted", extra={"items": erased})
        return http.json_response(200, {"topic": topic, "erased": erased})
    try:
        person = _person(payload, "orders_to_redact" if topic == CUSTOMERS_REDACT else "orders_requested")
    except ValueError as err:
        return http.json_error(400, "invalid_payload", str(err))
    held = find(STORES, deps.where, person)
    if topic == CUSTOMERS_REDACT:
        counts = erase(STORES, deps.where, person, held, deps.forget_salt())
        log.info("customer redacted", extra={"erased": counts})
        return http.json_response(200, {"topic": topic, "erased": sum(counts.values())})
    deps.send(_data_mail(payload, exported(held)))
    log.info("customer data mailed to the owner", extra={"records": len(held)})
    return http.json_response(200, {"topic": topic, "records": len(held)})
