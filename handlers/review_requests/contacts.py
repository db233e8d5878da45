"""Contacts in one canonical form, so an opt-out matches however the address was typed.

rrs-optout is keyed by the contact itself: an email address in lower case, or a phone number
in E.164 (``+447700900123``), both by the shared checks in ``handlers.common.emails`` and ``phones``
(which import their libraries on first use: rejecting a forged webhook should not pay for
the numbering metadata).
"""

from __future__ import annotations

from handlers.common import emails, phones


class InvalidContact(ValueError):
    """Neither a usable email address nor a valid phone number."""


def normalise_email(raw: str) -> str:
    """``"  Ann@Example.COM "`` -> ``"ann@example.com"``; InvalidContact if not an address."""
    value = emails.normalise_email(raw)
    if value is None:
        raise InvalidContact("not an email address")
    return value


def normalise_phone(raw: str, default_region: str) -> str:
    """A valid phone number in E.164; national numbers are read in ``default_region``."""
    number = phones.phone_e164(raw, default_region)
    if number is None:
        raise InvalidContact("not a valid phone number")
    return number


def can_receive_sms(e164: str) -> bool:
    """Whether the number is (or may be) a mobile: landlines never get the SMS ask."""
    return phones.may_be_mobile(e164)


def normalise_contact(raw: str, default_region: str) -> str:
    """An opt-out contact: an email address (it has an ``@``) or an E.164 phone number."""
    if "@" in raw:
        return normalise_email(raw)
    return normalise_phone(raw, default_region)


def try_email(raw: object) -> str | None:
    """The normalised address, or None when ``raw`` is empty or not an address."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        return normalise_email(raw)
    except InvalidContact:
        return None


def try_phone(raw: object, default_region: str) -> str | None:
    """The E.164 number, or None when ``raw`` is empty or not a valid number."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        return normalise_phone(raw, default_region)
    except InvalidContact:
        return None
