"""handlers/common/privacy.py's matching: what counts as mentioning a person, and what a shared
record keeps of the others."""

from __future__ import annotations

from decimal import Decimal

import pytest

from handlers.common.forgotten import salted
from handlers.common.privacy import GONE, Matcher, Person, remembered_forms

ANN = Person.of(email="Ann@Example.org", phone="07700 900123", ids=["7001"])


@pytest.mark.parametrize(
    "value",
    [
        "From: Ann <ANN@example.org>",  # an email anywhere, any case
        "call 07700 900123 after six",  # the phone, national form, spaced
        "+44 (0)7700-900123",  # and international, punctuated
        "7001",  # an id, whole
        "undo/7001.json",  # or one part of a key
        {"contacts": {"low": {"phone": "+447700900123"}}},  # nested
        Decimal(7001),  # a number attribute
    ],
)
def test_mentions(value: object) -> None:
    assert Matcher(ANN).mentions(value)


@pytest.mark.parametrize("value", ["17001", "70011#2", "annie@example.org", "07700 900124", Decimal(70010), True])
def test_does_not_mention(value: object) -> None:
    assert not Matcher(ANN).mentions(value)


def test_a_shared_document_keeps_the_others_rows() -> None:
    report = {"upload": "expo.csv", "rows": [
        {"row": 1, "email": "ann@example.org", "name": "Ann Smith"},
        {"row": 2, "email": "bob@example.org", "name": "Bob Jones"},
    ]}
    assert Matcher(ANN).without(report) == {"upload": "expo.csv", "rows": [report["rows"][1]]}
    assert Matcher(ANN).without({"email": "ann@example.org", "note": "x"}) is GONE


def test_an_email_or_phone_that_is_not_one_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"^email: "):
        Person.of(email="not an address")
    with pytest.raises(ValueError, match=r"^phone: "):
        Person.of(phone="12")


def test_only_salted_hashes_are_remembered() -> None:
    forms = remembered_forms(ANN, "salt-" + "s" * 40)
    assert forms == sorted([salted("ann@example.org", "salt-" + "s" * 40), salted("+447700900123", "salt-" + "s" * 40)])
    assert all(f.startswith("forgotten#") and "ann" not in f and "7700" not in f for f in forms)
    assert remembered_forms(ANN, "another-salt") != forms
