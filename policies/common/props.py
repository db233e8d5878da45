"""Resource properties as plain Python values, with unknowns made explicit.

CrossGuard hands rules the engine's properties wrapped in proxies that raise
``UnknownValueError`` on any access to a value unknown at preview. A single unknown field would
then abort a whole stack rule. ``plain`` copies the properties into dicts and lists once,
replacing every unknown by the :data:`UNKNOWN` marker, so each rule decides per value what an
unknown means (for an IAM document: a violation, since this project keeps them known).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pulumi_policy.proxy import (
    UNKNOWN_ARCHIVE_VALUE,
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    UnknownValueError,
)
from pulumi_policy.secret import Secret

_SENTINELS: Final = frozenset(
    {
        UNKNOWN_ARCHIVE_VALUE,
        UNKNOWN_ARRAY_VALUE,
        UNKNOWN_ASSET_VALUE,
        UNKNOWN_BOOLEAN_VALUE,
        UNKNOWN_NUMBER_VALUE,
        UNKNOWN_OBJECT_VALUE,
        UNKNOWN_STRING_VALUE,
    }
)


class Unknown:
    """A value the engine does not know yet (preview of a value computed from outputs)."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<unknown at preview>"

    def __bool__(self) -> bool:
        return False


UNKNOWN: Final = Unknown()


def is_unknown(value: Any) -> bool:
    """True for the marker and for the engine's raw sentinel strings."""
    return value is UNKNOWN or (isinstance(value, str) and value in _SENTINELS)


def plain(value: Any) -> Any:
    """A deep copy of ``value`` as dicts, lists and scalars; unknowns become :data:`UNKNOWN`."""
    if isinstance(value, Secret):
        return plain(value.value)
    if isinstance(value, str):
        return UNKNOWN if value in _SENTINELS else value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key in list(iter(value)):
            try:
                item = value[key]
            except UnknownValueError:
                out[str(key)] = UNKNOWN
                continue
            out[str(key)] = plain(item)
        return out
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        items: list[Any] = []
        for index in range(len(value)):
            try:
                item = value[index]
            except UnknownValueError:
                items.append(UNKNOWN)
                continue
            items.append(plain(item))
        return items
    return value


def props_of(resource: Any) -> dict[str, Any]:
    """The plain properties of a PolicyResource or ResourceValidationArgs."""
    copied = plain(getattr(resource, "props", None) or {})
    return copied if isinstance(copied, dict) else {}


def get_path(props: Mapping[str, Any], *path: str) -> Any:
    """``props[a][b]...`` or None when a step is missing or not a mapping (UNKNOWN stays)."""
    current: Any = props
    for step in path:
        if is_unknown(current):
            return UNKNOWN
        if not isinstance(current, Mapping):
            return None
        current = current.get(step)
    return current


def as_str(value: Any) -> str | None:
    """``value`` when it is a known string, else None."""
    return value if isinstance(value, str) and not is_unknown(value) else None


def string_map(value: Any) -> dict[str, Any]:
    """A mapping of str keys (e.g. tags, environment variables); anything else is empty."""
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    return {}


def stack_of(urn: str | None) -> str | None:
    """The stack name of ``urn:pulumi:<stack>::<project>::<type>::<name>``."""
    if not urn or not urn.startswith("urn:pulumi:"):
        return None
    stack = urn[len("urn:pulumi:") :].split("::", 1)[0]
    return stack or None
