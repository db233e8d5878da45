"""One email check and one phone normaliser, used by every system that reads an address.

Emails: ``email-validator`` (https://github.com/JoshData/python-email-validator) checks the
syntax of RFC 5321/5322 addresses as mail systems accept them today, without DNS
(``check_deliverability=False``, so dnspython is never imported): no leading, trailing or
doubled dot in the mailbox, no hyphen at either end of a domain label, a domain with a dot
and no special-use name (``.test``, ``.invalid``, ``localhost``), no quoted mailboxes or IP
literals, ASCII mailboxes only (SES and SMS providers do not take SMTPUTF8), length limits.
The comparable form is the ASCII address (an internationalised domain in punycode) in lower
case: every system keys opt-outs, hashes and identities on it.

Phones: ``phonenumbers`` (provided by ``phonenumberslite``, the same code and numbering
metadata without the geocoder, carrier and time-zone data, which no handler reads). A number
is read in a default region unless written internationally, and comes out in E.164.
"""

from __future__ import annotations

from functools import lru_cache

E164_MAX_DIGITS = 15


@lru_cache(maxsize=10_000)
def normalise_email(raw: str) -> str | None:
    """The address trimmed and lower-cased when its syntax is valid; None otherwise.

    A ``mailto:`` prefix and surrounding angle brackets are dropped first (forms and CRMs
    paste them); a display name or a list of addresses is not an address.
    """
    from email_validator import EmailNotValidError, validate_email

    value = raw.strip()
    if value[:7].lower() == "mailto:":
        value = value[7:]
    value = value.strip().removeprefix("<").removesuffix(">").strip()
    if not value or len(value) > 254:
        return None
    try:
        checked = validate_email(value, check_deliverability=False, allow_smtputf8=False)
    except EmailNotValidError:
        return None
    return str(checked.ascii_email or checked.normalized).lower()


def is_email(value: object) -> bool:
    """Whether ``value`` is a string holding one valid address."""
    return isinstance(value, str) and normalise_email(value) is not None


def phone_e164(raw: str, region: str | None, *, valid: bool = True) -> str | None:
    """The number in E.164 (``+447700900123``), or None when it is not a phone number.

    ``region`` (ISO 3166 alpha-2) reads a national number; None accepts international ones
    only. ``valid`` asks that the number be in a range the numbering plan assigns (what you
    can send an SMS to); ``valid=False`` asks only that it be possible (the right length for
    its country), which is enough to compare two records of one person.
    """
    import phonenumbers

    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        return None
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    ok = phonenumbers.is_valid_number(number) if valid else phonenumbers.is_possible_number(number)
    if not ok:
        return None
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))


def is_e164(value: object) -> bool:
    """Whether ``value`` is a valid number already written in E.164."""
    return isinstance(value, str) and value.startswith("+") and phone_e164(value, None) == value


def phone_region(e164: str) -> str | None:
    """The country (ISO alpha-2) a valid number belongs to; None for non-geographic ones."""
    import phonenumbers

    try:
        region = phonenumbers.region_code_for_number(phonenumbers.parse(e164, None))
    except phonenumbers.NumberParseException:
        return None
    return str(region) if region and region != "001" else None


def may_be_mobile(e164: str) -> bool:
    """Whether the number is (or may be) a mobile: the numbering plan says mobile, or cannot
    tell mobile from fixed line (the US and Canada)."""
    import phonenumbers

    try:
        kind = phonenumbers.number_type(phonenumbers.parse(e164, None))
    except phonenumbers.NumberParseException:
        return False
    return kind in (
        phonenumbers.PhoneNumberType.MOBILE,
        phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE,
    )
