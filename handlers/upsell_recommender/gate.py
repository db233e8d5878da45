"""Whether an order may lead to an offer at all: decided in upsr-order, before any slow work.

The order of the checks is the order of their weight: an opt-out is reported as an opt-out even
when the customer is also capped, so the orders table says the strongest reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from handlers.upsell_recommender.customers import is_capped


class Gate(StrEnum):
    """The gate outcome recorded on the order."""

    ELIGIBLE = "eligible"
    NO_CUSTOMER = "no-customer"
    OPTED_OUT = "opted-out"
    REDACTED = "customer-redacted"
    """Shopify withheld the customer's protected fields: no contact to nudge, none guessed."""
    NO_CONSENT = "no-consent"
    CAPPED = "capped"
    NO_SKUS = "no-skus"


def gate_order(
    *,
    customer_id: str | None,
    has_contact: bool,
    has_skus: bool,
    opted_out: bool,
    customer: Mapping[str, Any] | None,
    now: float,
    max_nudges: int,
    redacted: bool = False,
) -> Gate:
    """The gate outcome for one order.

    Args:
        customer_id: The order's customer; an order without one cannot be capped or nudged.
        has_contact: The customer consented to SMS or email marketing with a usable address.
        has_skus: At least one basket line carries a SKU the catalogue can match.
        opted_out: The customer is on upsr-optout.
        customer: The customer's upsr-customers item (None when there is none yet).
        now: Unix seconds.
        max_nudges: Nudges allowed per 30 days.
        redacted: Shopify redacted the customer (no protected customer data access).
    """
    if not customer_id:
        return Gate.NO_CUSTOMER
    if opted_out:
        return Gate.OPTED_OUT
    if redacted:
        return Gate.REDACTED
    if not has_contact:
        return Gate.NO_CONSENT
    if is_capped(customer, now, max_nudges):
        return Gate.CAPPED
    if not has_skus:
        return Gate.NO_SKUS
    return Gate.ELIGIBLE
