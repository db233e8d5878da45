"""The one clock every handler reads: the current time, aware UTC.

Handlers never call ``datetime.now`` themselves: ``handlers.common.entry`` hands each wired
service and each run a :data:`Clock`, which reads :func:`utc_now` unless a test or the sandbox
moved time through ``entry.registry.override(clock=...)``. A system that counts in Unix seconds
takes ``clock().timestamp()``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

Clock = Callable[[], dt.datetime]
"""What a service is given to read the time."""


def utc_now() -> dt.datetime:
    """The real time, aware UTC."""
    return dt.datetime.now(dt.UTC)
