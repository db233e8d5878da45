"""Contacts in one canonical form, so an opt-out matches however the address was typed.

rrs-optout is keyed by the contact itself: an email address in lower case, or a phone number
in E.164 (``+447700900123``). ``phonenumbers`` (vendored into rrs-webhook and rrs-sync) is
imported on first use only: rejecting a forged webhook should not pay for its metadata.
"""

from __future__ import annotations

import re

_EMAIL = re.compile(
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$"
)


class InvalidContact(ValueError):
    """Neither a usable email address nor a valid phone number."""


def normalise_email(raw: str) -> str:
    """``"  Ann@Example.COM "`` -> ``"ann@example.com"``; InvalidContact if not an address."""
    value = raw.strip().lower()
    if len(value) > 254 or not _EMAIL.match(value):
        raise InvalidContact("not an email address")
    return value


def normalise_phone(raw: str, default_region: str) -> str:
    """A valid phone number in E.164; national numbers are read in ``default_region``."""
    import phonenumbers

    try:
        number = phonenumbers.parse(raw.strip(), default_region)
    except phonenumbers.NumberParseException as err:
        raise InvalidContact("not a phone number") from err
    if not phonenumbers.is_valid_number(number):
        raise InvalidContact("not a valid phone number")
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))


def can_receive_sms(e164: str) -> bool:
    """Whether the number is (or may be) a mobile: landlines never get the SMS ask."""
    import phonenumbers

    number = phonenumbers.parse(e164, None)
    kind = phonenumbers.number_type(number)
    return kind in (
        phonenumbers.PhoneNumberType.MOBILE,
        phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE,
    )


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
