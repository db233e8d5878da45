"""DynamoDB's limits checked before a write, against what moto and boto3 really refuse."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from handlers.common.dynamo_limits import (
    MAX_DEPTH,
    Unstorable,
    as_dynamo,
    bounded_payload,
    check_item,
    storable,
)


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (Decimal("1e200"), "cannot store"),
        (10**40 + 1, "cannot store"),
        (Decimal("1" * 39), "cannot store"),
        (Decimal("1e-200"), "cannot store"),
        (Decimal("NaN"), "finite"),
        (1.5, "float"),
        (nested(MAX_DEPTH + 1), "32 levels"),
        ({"": 1}, "empty attribute name"),
        (set(), "empty set"),
        ("x" * (400 * 1024 + 1), "exceeds"),
    ],
)
def test_what_dynamodb_refuses_is_refused_before_the_write(
    value: Any, why: str, make_table: Callable[..., Any]
) -> None:
    with pytest.raises(Unstorable, match=why):
        check_item({"pk": "1", "value": value})
    # moto stores a 33-level map and an empty map key (and then cannot read the latter back);
    # DynamoDB refuses both (the Constraints page), so only boto3's and moto's own refusals
    # are replayed here.
    if why not in ("float", "finite", "32 levels", "empty attribute name"):
        table = make_table("limits", "pk")
        with pytest.raises(Exception):  # noqa: B017 - whatever boto3 or moto raises, it is refused
            table.put_item(Item={"pk": "1", "value": value})


def test_what_dynamodb_stores_passes(make_table: Callable[..., Any]) -> None:
    table = make_table("limits", "pk")
    for value in (Decimal("9.9999999999999999999999999999999999999E+125"), 10**37, Decimal("1E-130"),
                  nested(MAX_DEPTH - 1), {"k": [1, "", None, True]}, {"s"}, "x" * 1000):
        item = {"pk": "1", "value": value}
        check_item(item)
        table.put_item(Item=item)  # and DynamoDB (moto) agrees


def test_a_hostile_payload_is_kept_as_bounded_text() -> None:
    deep = json.loads("[" * 500 + "]" * 500)
    huge = {"price": 1e200, "n": 10**40, "deep": deep, "": "empty key"}
    kept = bounded_payload(huge, max_bytes=256)
    assert set(kept) == {"payload_json", "payload_kept_as"} and len(kept["payload_json"]) <= 256
    assert storable(kept)
    plain = {"completion_id": "cmp-1", "amount": 12.5}
    assert bounded_payload(plain) == {"payload": {"completion_id": "cmp-1", "amount": Decimal("12.5")}}
    assert as_dynamo({"a": [1.25, {"b": 2.5}]}) == {"a": [Decimal("1.25"), {"b": Decimal("2.5")}]}
