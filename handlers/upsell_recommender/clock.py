"""The one clock the handlers read, so tests can move time without sleeping."""

from __future__ import annotations

import time


def now() -> float:
    """Unix seconds now."""
    return time.time()
