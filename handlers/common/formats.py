"""The format version of what can outlive a deploy: queue messages and one-off schedule input.

A message written by one release may be read by the next (or, after a rollback, the previous)
one. Each writer stamps its kind's version (``stamp``); each reader checks it first (``read``):

* no version: the format 0.1.0 wrote before messages carried one, version 1, read as it was;
* a version up to the reader's: read (a reader that knows several branches on the answer);
* a newer version, or one that is not an integer: refused with ``batch.Unusable``, so the
  message is reported as a batch item failure and ends in its queue's DLQ (counted, alarmed,
  re-driven after a fix; docs/upgrading.md), never dropped or misread.

A version is bumped when a kind's format changes, and its reader then reads both. Extra keys
are harmless to every reader of 0.1.0 except upsr's suggest job (a pydantic model that forbids
them), which has carried its version under ``version`` since 0.1.0: ``key`` names that one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from handlers.common.batch import Unusable

KEY: Final = "v"
"""Where a message carries its format version."""
UNVERSIONED: Final = 1
"""The version of a message written before its kind carried one (0.1.0's)."""


def stamp(body: Mapping[str, Any], version: int, *, key: str = KEY) -> dict[str, Any]:
    """``body`` with its format version, ready to serialise."""
    return {**body, key: version}


def read(data: object, *, current: int, what: str, key: str = KEY) -> int:
    """The format version of a parsed message ``data`` (see the module); ``batch.Unusable``
    when it is not a JSON object or its version is not one this reader knows (1..current)."""
    if not isinstance(data, Mapping):
        raise Unusable(f"{what}: not a JSON object")
    version = data.get(key, UNVERSIONED)
    if type(version) is not int or not UNVERSIONED <= version <= current:
        shown = version if type(version) is int else type(version).__name__
        raise Unusable(f"{what}: format version {shown} is not read here (1..{current})")
    return version
