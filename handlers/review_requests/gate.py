"""The door: who may be asked, on which channel, with what signal. Pure decisions, no AWS.

A completion becomes a scheduled request only when the customer has a contact we can use on
their channel, none of their contacts is opted out, the sheet does not exclude them, and the
job finished recently. Otherwise the request is still written, as ``suppressed`` with its
reasons, so a redelivery finds it and the audit can say why nobody was asked.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from handlers.review_requests.contacts import can_receive_sms, try_email, try_phone
from handlers.review_requests.domain import SENTIMENTS, Channel, Customer, Signal

MAX_COMPLETION_AGE = dt.timedelta(days=14)
"""A completion older than this is not asked about: the moment has passed."""
MAX_NOTES_CHARS = 1000


@dataclass(frozen=True)
class Decision:
    """The gate's answer for one completion.

    Attributes:
        eligible: Whether an ask is scheduled.
        reasons: Why not (empty when eligible).
        channel: Where the ask goes (None when no usable contact).
        contact: The address or number the ask goes to.
    """

    eligible: bool
    reasons: tuple[str, ...]
    channel: Channel | None
    contact: str | None


def merge_customer(
    customer_id: str,
    stored: Customer | None,
    given: Mapping[str, Any] | None,
    phone_region: str,
) -> Customer:
    """The sheet's row, overlaid with the contact details the completion carried (fresher)."""
    base = stored or Customer(customer_id=customer_id)
    if not given:
        return base
    changes: dict[str, Any] = {}
    if isinstance(given.get("name"), str) and given["name"].strip():
        changes["name"] = given["name"].strip()[:120]
    email = try_email(given.get("email"))
    if email:
        changes["email"] = email
    phone = try_phone(given.get("phone"), phone_region)
    if phone:
        changes["phone"] = phone
    if isinstance(given.get("timezone"), str) and given["timezone"].strip():
        changes["timezone"] = given["timezone"].strip()
    if given.get("channel") in (Channel.EMAIL.value, Channel.SMS.value):
        changes["channel"] = given["channel"]
    return replace(base, **changes)


def choose_channel(customer: Customer) -> tuple[Channel | None, str | None]:
    """The customer's preferred channel if usable, else email, else SMS to a mobile."""
    sms_ok = customer.phone is not None and can_receive_sms(customer.phone)
    if customer.channel == Channel.SMS.value and sms_ok:
        return Channel.SMS, customer.phone
    if customer.email:
        return Channel.EMAIL, customer.email
    if sms_ok:
        return Channel.SMS, customer.phone
    return None, None


def capture_signal(event_signal: Mapping[str, Any] | None, customer: Customer) -> Signal:
    """The completion's own signal if it has one, the sheet's history otherwise."""
    given = dict(event_signal or {})
    rating = given.get("rating")
    rating = int(rating) if isinstance(rating, int | float) and 1 <= rating <= 5 else None
    notes = given.get("notes")
    notes = " ".join(notes.split())[:MAX_NOTES_CHARS] if isinstance(notes, str) else ""
    complaint = given.get("complaint") is True
    prior = customer.prior_sentiment if customer.prior_sentiment in SENTIMENTS else None
    fresh = rating is not None or bool(notes) or complaint
    source = "event" if fresh else ("history" if prior or customer.past_complaints else "none")
    return Signal(
        source=source,
        rating=rating,
        notes=notes,
        complaint=complaint,
        prior_sentiment=prior,
        past_complaints=customer.past_complaints,
    )


def decide(
    customer: Customer,
    *,
    opted_out: str | None,
    completed_at: dt.datetime,
    now: dt.datetime,
) -> Decision:
    """Eligibility and channel; ``opted_out`` is the first of the contacts on the list."""
    reasons: list[str] = []
    channel, contact = choose_channel(customer)
    if channel is None:
        reasons.append("no_usable_contact")
    if opted_out is not None:
        reasons.append("opted_out")
    if customer.do_not_ask:
        reasons.append("excluded_in_sheet")
    if now - completed_at > MAX_COMPLETION_AGE:
        reasons.append("completion_too_old")
    if completed_at - now > dt.timedelta(hours=1):
        reasons.append("completion_in_future")
    return Decision(not reasons, tuple(reasons), channel, contact)
