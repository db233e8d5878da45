"""What the pump did that the report shows: its own module so that the schedules and the
triggers (which play the schedules) both name it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox.runtime import Invocation


@dataclass
class Trace:
    """Something the pump did that the report shows (a delivery, a drop, a DLQ move)."""

    kind: str
    source: str
    target: str
    detail: str = ""
    invocation: Invocation | None = None
