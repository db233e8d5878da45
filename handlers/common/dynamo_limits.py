"""What DynamoDB can store, checked before anything is written.

A public endpoint that writes a marker and then fails to write the rest wedges itself on every
retry, so every item built from a payload is checked here first and a value DynamoDB would
refuse becomes a 4xx (or a junk record) before the first write. The limits are DynamoDB's own,
from "Constraints in Amazon DynamoDB"
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html):

* Number: up to 38 digits of precision; positive values from 1E-130 to
  9.9999999999999999999999999999999999999E+125, negative values likewise. boto3 serialises
  through ``boto3.dynamodb.types.DYNAMODB_CONTEXT`` (38 digits, traps on rounding and
  overflow), so a value that context refuses never reaches the service: it is checked with
  that same context. Floats, NaN and infinities are refused (boto3 refuses floats too).
* Nested attributes: up to 32 levels deep.
* Item size: at most 400 KB, attribute names included (binary units: 1 KB = 1024 bytes).
* Attribute names, map keys included, are at least one character long; sets are not empty.

The walk is iterative, so a hostile payload nested thousands of levels deep is measured, not
recursed into. ``bounded_payload`` is how a raw third-party payload is kept: as a map when it
is small and storable, otherwise as its JSON text cut to a bound, never as something that can
fail the write of the item around it.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Mapping, Set
from typing import Any

from handlers.common import cold_path

MAX_ITEM_BYTES = 400 * 1024
MAX_DEPTH = 32
MAX_NUMBER_DIGITS = 38


class Unstorable(ValueError):
    """A value DynamoDB (or boto3's serialiser) would refuse; ``path`` says where."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path or '<item>'}: {reason}")
        self.path = path
        self.reason = reason


def check_number(value: int | decimal.Decimal, path: str = "") -> int:
    """The number's stored size estimate in bytes, or ``Unstorable``."""
    try:
        number = value if isinstance(value, decimal.Decimal) else decimal.Decimal(value)
        if not number.is_finite():
            raise Unstorable(path, "not a finite number")
        stored = cold_path.load("boto3.dynamodb.types").DYNAMODB_CONTEXT.create_decimal(number)
    except decimal.DecimalException as err:
        raise Unstorable(
            path, f"a number DynamoDB cannot store (38 digits, magnitude 1E-130 to 1E+126): {err.__class__.__name__}"
        ) from None
    digits = len(stored.as_tuple().digits)
    return 1 + (digits + 1) // 2


def check_item(item: Mapping[str, Any], *, max_bytes: int = MAX_ITEM_BYTES) -> int:
    """Raise ``Unstorable`` unless ``item`` fits DynamoDB's limits; its size estimate in bytes.

    The estimate follows DynamoDB's item-size rules (names plus values, 3 bytes per list or
    map, 1 per element, numbers about one byte per two digits) rounded up, so an item it
    passes is not refused for size.
    """
    size = 0
    # (path, value, depth): depth counts the containers around the value.
    stack: list[tuple[str, Any, int]] = []
    for name, value in item.items():
        size += _name(str(name), str(name))
        stack.append((str(name), value, 0))
    while stack:
        path, value, depth = stack.pop()
        if value is None or isinstance(value, bool):
            size += 1
        elif isinstance(value, str):
            size += len(value.encode("utf-8", "surrogatepass"))
        elif isinstance(value, bytes | bytearray):
            size += len(value)
        elif isinstance(value, int | decimal.Decimal):
            size += check_number(value, path)
        elif isinstance(value, float):
            raise Unstorable(path, "a float (convert to Decimal first)")
        elif isinstance(value, Mapping):
            if depth + 1 > MAX_DEPTH:
                raise Unstorable(path, f"nested more than {MAX_DEPTH} levels deep")
            size += 3
            for key, inner in value.items():
                if not isinstance(key, str):
                    raise Unstorable(path, "a map key that is not a string")
                size += _name(f"{path}.{key}", key) + 1
                stack.append((f"{path}.{key}", inner, depth + 1))
        elif isinstance(value, list | tuple):
            if depth + 1 > MAX_DEPTH:
                raise Unstorable(path, f"nested more than {MAX_DEPTH} levels deep")
            size += 3
            for index, inner in enumerate(value):
                size += 1
                stack.append((f"{path}[{index}]", inner, depth + 1))
        elif isinstance(value, Set):
            if not value:
                raise Unstorable(path, "an empty set")
            for member in value:
                stack.append((f"{path}{{}}", member, depth))
        else:
            raise Unstorable(path, f"a {type(value).__name__}, which DynamoDB has no type for")
        if size > max_bytes:
            raise Unstorable(path, f"the item exceeds {max_bytes} bytes")
    return size


def _name(path: str, name: str) -> int:
    if not name:
        raise Unstorable(path, "an empty attribute name or map key")
    return len(name.encode("utf-8", "surrogatepass"))


def storable(item: Mapping[str, Any], *, max_bytes: int = MAX_ITEM_BYTES) -> bool:
    try:
        check_item(item, max_bytes=max_bytes)
    except Unstorable:
        return False
    return True


def as_dynamo(value: Any) -> Any:
    """Parsed JSON made ready for boto3: floats as Decimal (``Decimal(str(f))``)."""
    stack: list[Any] = []
    root: list[Any] = [value]
    stack.append((root, 0))
    while stack:
        holder, key = stack.pop()
        inner = holder[key]
        if isinstance(inner, float):
            holder[key] = decimal.Decimal(str(inner))
        elif isinstance(inner, dict):
            copy = dict(inner)
            holder[key] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(inner, list | tuple):
            items = list(inner)
            holder[key] = items
            stack.extend((items, i) for i in range(len(items)))
    return root[0]


def bounded_payload(
    payload: Mapping[str, Any], *, name: str = "payload", max_bytes: int = 16 * 1024, depth_left: int = MAX_DEPTH - 1
) -> dict[str, Any]:
    """How to keep a raw payload inside another item: ``{name: map}`` when it is storable,
    at most ``max_bytes`` and at most ``depth_left`` levels deep; otherwise
    ``{name + "_json": <its JSON text, cut to max_bytes>, name + "_kept_as": "text"}``."""
    try:
        value = as_dynamo(payload)
        size = check_item({name: value}, max_bytes=max_bytes)
        if size <= max_bytes and _depth(value) <= depth_left:
            return {name: value}
    except (Unstorable, RecursionError):
        pass
    try:
        text = json.dumps(payload, separators=(",", ":"), sort_keys=True, default=str)
    except (ValueError, RecursionError):
        text = "<not serialisable>"
    cut = text.encode("utf-8")[:max_bytes].decode("utf-8", "ignore")
    return {f"{name}_json": cut, f"{name}_kept_as": "text" if cut == text else "text, cut"}


def _depth(value: Any) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        inner, depth = stack.pop()
        if isinstance(inner, Mapping):
            deepest = max(deepest, depth + 1)
            stack.extend((v, depth + 1) for v in inner.values())
        elif isinstance(inner, list | tuple):
            deepest = max(deepest, depth + 1)
            stack.extend((v, depth + 1) for v in inner)
    return deepest
