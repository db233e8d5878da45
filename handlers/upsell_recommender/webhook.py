"""The Shopify orders/create webhook payload, read only after its signature is verified.

The webhook's authenticity is checked in ``order`` (``handlers.common.webhook_signatures``) on
the raw bytes; this module only reads a payload already known to come from the shop, which is
why upsr-order imports it (and pydantic) after the check.

Consent follows Shopify's customer marketing-consent fields: a nudge goes by SMS only to a
customer subscribed to SMS marketing with an E.164 phone, else by email only to one subscribed
to email marketing. Without either there is nothing to send and no job is made.

Protected customer data: Shopify sends an order's customer name, email and phone only to an app
approved for them; otherwise the webhook carries the customer with those fields redacted (null
or absent), as "Work with protected customer data" warns ("you might need to update your app to
handle errors or redacted data": https://shopify.dev/docs/apps/launch/protected-customer-data).
Such an order is ``redacted``: the documented fallback is no nudge for it (nothing is guessed),
and upsr-order counts and notes it so the owner's roll-up says what to request.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from handlers.upsell_recommender.domain import (
    MAX_LINE_QUANTITY,
    BasketLine,
    Channel,
    Contact,
    is_email,
    is_money,
    is_phone,
    to_decimal,
)


class PayloadError(ValueError):
    """The webhook body is not an order this system can use."""


class _Consent(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)
    state: str | None = None


class _Customer(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)
    id: int | str
    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    phone: str | None = None
    email_marketing_consent: _Consent | None = None
    sms_marketing_consent: _Consent | None = None


class _Line(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)
    sku: str | None = None
    variant_id: int | None = None
    title: str = ""
    quantity: int = Field(ge=0, le=MAX_LINE_QUANTITY)
    price: str = Field(max_length=40)


class _Order(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)
    id: int
    name: str = ""
    created_at: dt.datetime
    currency: str = ""
    subtotal_price: str | None = Field(default=None, max_length=40)
    line_items: list[_Line] = Field(default_factory=list, max_length=500)
    customer: _Customer | None = None
    email: str | None = None
    phone: str | None = None
    contact_email: str | None = None


@dataclass(frozen=True)
class OrderEvent:
    """What upsr-order needs from an orders/create payload.

    Attributes:
        order_id: Shopify's order id (numeric string): the dedup key.
        name: The shop's order name (``#1001``), for logs.
        created_at: Unix seconds the order was created; older than the replay horizon is refused.
        currency: ISO currency of the prices.
        subtotal: Line total after discounts, before shipping and tax.
        lines: Basket lines that carry a SKU (only those can be matched to the catalogue).
        customer_id: Shopify customer id, or None for an order without a customer.
        contact: The consented channel, or None when the customer agreed to neither.
        redacted: The order has a customer but Shopify withheld every protected field (name,
            email, phone): the app lacks protected customer data access.
    """

    order_id: str
    name: str
    created_at: int
    currency: str
    subtotal: Decimal
    lines: tuple[BasketLine, ...]
    customer_id: str | None
    contact: Contact | None
    redacted: bool = False


def _subscribed(consent: _Consent | None) -> bool:
    return consent is not None and (consent.state or "").lower() == "subscribed"


def _contact(order: _Order) -> Contact | None:
    customer = order.customer
    if customer is None:
        return None
    first_name = (customer.first_name or "").strip()[:40]
    phone = (customer.phone or order.phone or "").replace(" ", "")
    if _subscribed(customer.sms_marketing_consent) and is_phone(phone):
        return Contact(Channel.SMS, phone, first_name)
    email = (customer.email or order.email or "").strip()
    if _subscribed(customer.email_marketing_consent) and is_email(email):
        return Contact(Channel.EMAIL, email, first_name)
    return None


def _redacted(order: _Order) -> bool:
    """A customer with an id and not one protected field, on the customer or the order."""
    customer = order.customer
    if customer is None:
        return False
    protected = (
        customer.first_name,
        customer.last_name,
        customer.email,
        customer.phone,
        order.email,
        order.phone,
        order.contact_email,
    )
    return not any((value or "").strip() for value in protected)


def parse_order(document: Mapping[str, Any]) -> OrderEvent:
    """The order in an orders/create payload; PayloadError when it is not one."""
    try:
        order = _Order.model_validate(document)
    except ValidationError as err:
        fields = sorted({".".join(str(p) for p in e["loc"]) or "<root>" for e in err.errors()})
        raise PayloadError(f"not an order: invalid {', '.join(fields[:5])}") from None
    created = order.created_at
    if created.tzinfo is None:
        raise PayloadError("created_at has no UTC offset")
    lines: list[BasketLine] = []
    for index, line in enumerate(order.line_items):
        sku = (line.sku or "").strip()
        price = to_decimal(line.price)
        if price is not None and not is_money(price):
            # A price no shop charges (1e200, 40 digits): refused here, before anything is
            # written, rather than by the job model or DynamoDB after the order marker.
            raise PayloadError(f"not an order: line_items.{index}.price is out of range")
        if not sku or price is None or line.quantity < 1 or len(sku) > 64:
            continue
        lines.append(BasketLine(sku, line.title[:255], line.quantity, price))
    subtotal = to_decimal(order.subtotal_price)
    if subtotal is not None and subtotal >= 0 and not is_money(subtotal):
        raise PayloadError("not an order: subtotal_price is out of range")
    if subtotal is None or subtotal < 0:
        subtotal = sum((line.price * line.quantity for line in lines), Decimal(0))
        if not is_money(subtotal):
            raise PayloadError("not an order: the line totals are out of range")
    return OrderEvent(
        order_id=str(order.id),
        name=order.name[:32],
        created_at=int(created.timestamp()),
        currency=order.currency[:3].upper(),
        subtotal=subtotal,
        lines=tuple(lines),
        customer_id=None if order.customer is None else str(order.customer.id)[:64],
        contact=_contact(order),
        redacted=_redacted(order),
    )
