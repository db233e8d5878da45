"""Configuration from the environment the infra sets: names, ids, URLs and numbers only.

Read at call time, never at import, so importing a handler costs nothing and tests can set
variables per test. A missing or malformed variable is a deployment bug: it raises
``EnvError`` naming the variable.
"""

from __future__ import annotations

import os


class EnvError(RuntimeError):
    """A required environment variable is missing or malformed."""


def text(name: str) -> str:
    """The non-empty value of ``name``."""
    value = os.environ.get(name, "").strip()
    if not value:
        raise EnvError(f"environment variable {name} is not set")
    return value


def integer(name: str, default: int | None = None) -> int:
    """``name`` as an integer (``default`` when unset and a default is given)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        if default is None:
            raise EnvError(f"environment variable {name} is not set")
        return default
    try:
        return int(raw)
    except ValueError as err:
        raise EnvError(f"environment variable {name} is not an integer: {raw!r}") from err


def number(name: str, default: float | None = None) -> float:
    """``name`` as a float (``default`` when unset and a default is given)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        if default is None:
            raise EnvError(f"environment variable {name} is not set")
        return default
    try:
        return float(raw)
    except ValueError as err:
        raise EnvError(f"environment variable {name} is not a number: {raw!r}") from err
