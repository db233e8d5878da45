"""The upsell recommender's vocabulary: offer states, catalogue rows, contacts, basket lines.

Plain dataclasses with explicit conversions to and from DynamoDB items (numbers as
``Decimal``, sets as Python sets), so the rules in ``gate`` and ``picking`` never see boto3.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any

from handlers.common import emails, phones

ADD_ACTION = "upsr-add"
"""The action a one-tap link token is issued for; a token for anything else is refused."""

NUDGE_CAP_WINDOW_S = 30 * 24 * 3600
"""The frequency cap counts nudges over the last 30 days (``max_nudges_per_30_days``)."""

_VARIANT = re.compile(r"^\d{1,20}$")


class OfferState(StrEnum):
    """Where an offer is. Every move between states is one conditional write.

    chosen -> sent -> taken | out-of-window | ignored; chosen -> suppressed (opt-out, cap, no
    contact found at send time), sent -> suppressed (cap lost in a race, message rejected);
    no-fit is written instead of chosen when nothing passes the catalogue filters.
    """

    CHOSEN = "chosen"
    SENT = "sent"
    TAKEN = "taken"
    OUT_OF_WINDOW = "out-of-window"
    IGNORED = "ignored"
    NO_FIT = "no-fit"
    SUPPRESSED = "suppressed"


class Channel(StrEnum):
    """How a nudge reaches the customer."""

    SMS = "sms"
    EMAIL = "email"


def offer_id_for(order_id: str) -> str:
    """The one offer id an order can have: duplicates of a job collide on it."""
    return f"ofr-{order_id}"


def is_phone(value: str | None) -> bool:
    """A number written in E.164 (``+447700900123``), the form End User Messaging SMS accepts,
    of a possible length for its country (``handlers.common.phones``). Shopify stores E.164
    already; whether the range is assigned is the SMS service's answer, recorded per send."""
    return phones.is_e164(value, valid=False)


def is_email(value: str | None) -> bool:
    """One valid address (no display name, no list), by the shared check."""
    return emails.is_email(value)


def is_variant_id(value: object) -> bool:
    """A numeric Shopify variant id, the only thing the cart URL interpolates."""
    return isinstance(value, str) and bool(_VARIANT.match(value))


def to_decimal(value: object) -> Decimal | None:
    """A finite Decimal from a string or number; None when it is not one."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


@dataclass(frozen=True)
class Contact:
    """Where and how a nudge may go: the channel the customer consented to.

    Attributes:
        channel: SMS when the customer subscribed to SMS marketing and has an E.164 phone,
            else email when subscribed to email marketing.
        address: The phone number or email address.
        first_name: For the greeting; may be empty.
    """

    channel: Channel
    address: str
    first_name: str = ""

    def to_item(self) -> dict[str, str]:
        return {
            "channel": self.channel.value,
            "address": self.address,
            "first_name": self.first_name,
        }

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Contact | None:
        """The contact stored on an offer, or None when it is missing or not usable."""
        try:
            channel = Channel(str(item.get("channel", "")))
        except ValueError:
            return None
        address = str(item.get("address", ""))
        valid = is_phone(address) if channel is Channel.SMS else is_email(address)
        if not valid:
            return None
        return cls(channel, address, str(item.get("first_name", ""))[:40])


@dataclass(frozen=True)
class BasketLine:
    """One line of the order as the picker needs it."""

    sku: str
    title: str
    quantity: int
    price: Decimal


@dataclass(frozen=True)
class CatalogueItem:
    """One row of ``upsr-catalogue``: a sellable variant, keyed by SKU.

    Attributes:
        sku: The store's SKU (the table key).
        variant_id: Numeric Shopify variant id, used in the add-to-cart URL.
        product_id: Numeric Shopify product id.
        title: Product title (with the variant title when it is not the default).
        category: Lower-cased product type.
        complements: Categories this product goes with (``complements:<category>`` tags).
        price: Unit price in the shop's currency.
        stock: Units on hand; None when the store does not track inventory for it.
        available: Active and available for sale in the store.
        synced_at: Unix seconds of the sync that wrote the row.
    """

    sku: str
    variant_id: str
    product_id: str
    title: str
    category: str
    complements: frozenset[str] = field(default_factory=frozenset)
    price: Decimal = Decimal(0)
    stock: int | None = None
    available: bool = True
    synced_at: int = 0

    def in_stock(self) -> bool:
        """Sellable now: available, and either untracked or with units on hand."""
        return self.available and (self.stock is None or self.stock > 0)

    def to_item(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "sku": self.sku,
            "variant_id": self.variant_id,
            "product_id": self.product_id,
            "title": self.title,
            "category": self.category,
            "price": self.price,
            "available": self.available,
            "synced_at": self.synced_at,
        }
        if self.complements:
            # DynamoDB refuses empty sets, so "no complements" is an absent attribute.
            item["complements"] = set(self.complements)
        if self.stock is not None:
            item["stock"] = self.stock
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> CatalogueItem | None:
        """The row as stored, or None when it lacks what the filters need."""
        price = to_decimal(item.get("price"))
        sku = item.get("sku")
        variant = str(item.get("variant_id", ""))
        if not isinstance(sku, str) or not sku or price is None or not is_variant_id(variant):
            return None
        stock = item.get("stock")
        return cls(
            sku=sku,
            variant_id=variant,
            product_id=str(item.get("product_id", "")),
            title=str(item.get("title", ""))[:200],
            category=str(item.get("category", "")).lower(),
            complements=frozenset(str(c).lower() for c in _iter(item.get("complements"))),
            price=price,
            stock=None if stock is None else int(stock),
            available=bool(item.get("available", False)),
            synced_at=int(item.get("synced_at", 0)),
        )


def _iter(value: object) -> Iterable[object]:
    if isinstance(value, set | frozenset | list | tuple):
        return value
    return ()
