"""A function's environment as one typed, frozen record: declared once, read once, no defaults.

Each function declares its variables as a frozen dataclass subclassing :class:`Settings` in its
system's ``contract.py``. The infrastructure builds the function's environment from the same
class (:meth:`Settings.environment`), so a variable the handler reads and the infra does not set
fails ``make plan``; the handler reads it with :func:`current`, which fails at the first call,
naming the variable, instead of masking a missing value with a default.

The variable of field ``requests_table`` is ``REQUESTS_TABLE``: one naming rule for every system
(each function has its own environment, so names need no system prefix).

A field whose name ends in ``_secret_id`` or ``_secret`` holds a Secrets Manager name or ARN,
never the secret: a value that cannot be one (spaces, braces, quotes: a value pasted in place of
the name) is refused, naming the variable.

Field types: ``str``, ``int``, ``float``, ``bool`` and ``str | None``. ``str | None`` is the one
optional kind: the variable may be absent (an optional feature the stack turned off); it is not
a default, the handler sees ``None`` and decides.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import typing
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from handlers.common.secrets import SECRET_ID_PATTERN

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


class MissingSetting(RuntimeError):
    """A variable the infrastructure should have set is absent or malformed."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """Base of every function's environment record (subclasses are frozen dataclasses)."""

    @classmethod
    def variable(cls, field_name: str) -> str:
        """The environment variable of one field."""
        return field_name.upper()

    @classmethod
    def variables(cls) -> tuple[str, ...]:
        """Every variable the record reads, in declaration order."""
        return tuple(cls.variable(f.name) for f in dataclasses.fields(cls))

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Self:
        """Read and convert every field; MissingSetting names the first variable that fails."""
        source = os.environ if environ is None else environ
        types = _field_types(cls)
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            name = cls.variable(f.name)
            raw = source.get(name, "").strip()
            kind = types[f.name]
            optional = kind == (str | None)
            if not raw:
                if optional:
                    values[f.name] = None
                    continue
                raise MissingSetting(f"environment variable {name} is not set")
            values[f.name] = _convert(name, raw, str if optional else kind)
            if f.name.endswith(("_secret_id", "_secret")):
                _check_secret_id(name, raw)
        return cls(**values)

    @classmethod
    def environment(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """The function's environment, for the infrastructure: this record's fields, by variable.

        ``values`` maps field names to values; it may hold more (a system's shared mapping) and
        each record picks its own. A required field missing from ``values`` raises KeyError
        naming it; an optional one that is None is left out; numbers and booleans become text.
        Other values (Pulumi outputs) pass through.
        """
        types = _field_types(cls)
        out: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name not in values:
                raise KeyError(f"{cls.__name__} needs {f.name!r} ({cls.variable(f.name)})")
            value = values[f.name]
            if value is None:
                if types[f.name] == (str | None):
                    continue
                raise KeyError(f"{cls.__name__}.{f.name} is required, got None")
            out[cls.variable(f.name)] = _text(value)
        return out


_types: dict[type, dict[str, Any]] = {}


def _field_types(kind: type) -> dict[str, Any]:
    """The record's field types, resolved once per class (annotations are strings here)."""
    found = _types.get(kind)
    if found is None:
        found = _types[kind] = typing.get_type_hints(kind)
    return found


def _convert(name: str, raw: str, kind: Any) -> Any:
    if kind is str:
        return raw
    if kind is bool:
        lowered = raw.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise MissingSetting(f"environment variable {name} is not a boolean: {raw!r}")
    if kind in (int, float):
        try:
            return kind(raw)
        except ValueError as err:
            what = "an integer" if kind is int else "a number"
            raise MissingSetting(f"environment variable {name} is not {what}: {raw!r}") from err
    raise TypeError(f"unsupported settings type for {name}: {kind!r}")


def _check_secret_id(name: str, raw: str) -> None:
    if not SECRET_ID_PATTERN.match(raw):
        raise MissingSetting(
            f"environment variable {name} must hold a secret name or ARN, not a value"
        )


def _text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return value


S = TypeVar("S", bound=Settings)
_cache: dict[type, Settings] = {}
_lock = threading.Lock()


def current(kind: type[S]) -> S:
    """This process's record of ``kind``, read from the environment on first use."""
    found = _cache.get(kind)
    if found is None:
        with _lock:
            found = _cache.get(kind)
            if found is None:
                found = kind.from_environ()
                _cache[kind] = found
    return typing.cast(S, found)


def reset() -> None:
    """Forget the records read (tests change the environment between cases)."""
    with _lock:
        _cache.clear()
