"""The one email check and the one phone normaliser every system uses."""

from __future__ import annotations

import pytest

from handlers.common.emails import is_email, normalise_email
from handlers.common.phones import is_e164, may_be_mobile, phone_e164, phone_region


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("jane.doe@acme.co.uk", "jane.doe@acme.co.uk"),
        ("  Jane.Doe+leads@Acme-Widgets.CO.UK ", "jane.doe+leads@acme-widgets.co.uk"),
        ("mailto:ann@example.com", "ann@example.com"),
        ("<ann@example.com>", "ann@example.com"),
        ("o'neil@acme.io", "o'neil@acme.io"),
        ("first_last@sub.domain.org", "first_last@sub.domain.org"),
        ("a@b.co", "a@b.co"),
        ("jane@bücher.de", "jane@xn--bcher-kva.de"),  # the ASCII (punycode) form
    ],
)
def test_ordinary_addresses_are_accepted_in_one_comparable_form(given: str, expected: str) -> None:
    assert normalise_email(given) == expected
    assert is_email(given)


@pytest.mark.parametrize(
    "given",
    [
        "jane..doe@x.com",  # doubled dot
        ".jane@x.com",  # leading dot
        "jane.@x.com",  # trailing dot
        "jane@-example.com",  # label starting with a hyphen
        "jane@example-.com",  # label ending with a hyphen
        "jane@x..com",
        "jane@x",  # no dot in the domain
        "jane@localhost",
        "jane@mail.test",  # special-use name
        "jane doe@x.com",
        "jane@x.com, ann@y.com",  # a list
        "Jane Doe <jane@x.com>",  # a display name
        '"quoted"@x.com',
        "x@[127.0.0.1]",
        "jöhn@x.com",  # SMTPUTF8 mailbox: SES does not take it
        "@x.com",
        "jane@",
        "",
        "   ",
        "jane@" + "a" * 250 + ".com",
    ],
)
def test_malformed_addresses_are_refused(given: str) -> None:
    assert normalise_email(given) is None
    assert not is_email(given)


def test_is_email_takes_any_value() -> None:
    assert not is_email(None) and not is_email(42)


@pytest.mark.parametrize(
    ("given", "region", "expected"),
    [
        ("020 7946 0018", "GB", "+442079460018"),
        ("+44 20 7946 0018", None, "+442079460018"),
        ("0044 20 7946 0018", "GB", "+442079460018"),
        ("+44 (0)20 7946 0018", "US", "+442079460018"),
        ("07400 123456", "GB", "+447400123456"),
        ("(415) 555-0132", "US", "+14155550132"),
        ("415 555 0132", None, None),  # national number without a region
        ("020 7946 001", "GB", None),  # too short
        ("abc", "GB", None),
        ("", "GB", None),
    ],
)
def test_phone_e164(given: str, region: str | None, expected: str | None) -> None:
    assert phone_e164(given, region) == expected


def test_possible_is_weaker_than_valid() -> None:
    # 07700 900xxx (Ofcom's drama range) has a mobile's length but is never assigned.
    assert phone_e164("07700 900123", "GB") is None
    assert phone_e164("07700 900123", "GB", valid=False) == "+447700900123"
    assert not is_e164("+447700900123") and is_e164("+447700900123", valid=False)


def test_e164_region_and_mobile() -> None:
    assert is_e164("+447400123456") and not is_e164("07400123456")
    assert not is_e164("+44 7400 123456") and not is_e164(None)
    assert phone_region("+447400123456") == "GB"
    assert phone_region("+14155550132") == "US"
    assert phone_region("+80012345678") is None  # non-geographic (international freephone)
    assert phone_region("not a number") is None
    assert may_be_mobile("+447400123456")  # UK mobile
    assert not may_be_mobile("+442079460018")  # London landline
    assert may_be_mobile("+14155550132")  # the US plan cannot tell: fixed line or mobile
