"""The one phone normaliser every system uses: phonenumbers, to E.164.

The ``phonenumbers`` module comes from the ``phonenumberslite`` distribution: the same code and
numbering metadata without the geocoder, carrier and time-zone data, which no handler reads
(same answers for parse, validity, format, region and number type on 53,834 cases; see
docs/libraries.md). A number is read in a default region unless written internationally.
"""

from __future__ import annotations

from handlers.common import cold_path


def phone_e164(raw: str, region: str | None, *, valid: bool = True) -> str | None:
    """The number in E.164 (``+447700900123``), or None when it is not a phone number.

    ``region`` (ISO 3166 alpha-2) reads a national number; None accepts international ones
    only. ``valid`` asks that the number be in a range the numbering plan assigns (what you
    can send an SMS to); ``valid=False`` asks only that it be possible (the right length for
    its country), which is enough to compare two records of one person.
    """
    phonenumbers = cold_path.load("phonenumbers")
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


def is_e164(value: object, *, valid: bool = True) -> bool:
    """Whether ``value`` is a number already written in E.164, valid (or only possible)."""
    return (
        isinstance(value, str)
        and value.startswith("+")
        and phone_e164(value, None, valid=valid) == value
    )


def phone_region(e164: str) -> str | None:
    """The country (ISO alpha-2) a valid number belongs to; None for non-geographic ones."""
    phonenumbers = cold_path.load("phonenumbers")
    try:
        region = phonenumbers.region_code_for_number(phonenumbers.parse(e164, None))
    except phonenumbers.NumberParseException:
        return None
    return str(region) if region and region != "001" else None


def may_be_mobile(e164: str) -> bool:
    """Whether the number is (or may be) a mobile: the numbering plan says mobile, or cannot
    tell mobile from fixed line (the US and Canada)."""
    phonenumbers = cold_path.load("phonenumbers")
    try:
        kind = phonenumbers.number_type(phonenumbers.parse(e164, None))
    except phonenumbers.NumberParseException:
        return False
    return kind in (
        phonenumbers.PhoneNumberType.MOBILE,
        phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE,
    )
