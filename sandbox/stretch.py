"""A stretch of sandbox activity: where the sandbox's records stood when it began, and what
they gained since. The demo's report prints each step's stretch (``sandbox.report``) and
``make bench-abuse``'s meter counts one (``sandbox.meter``), from the same records read the
same way: the runtime's invocations, the interceptor's ledger, the pump's traces, the outbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox.core import Sandbox
    from sandbox.interceptor import CallRecord
    from sandbox.runtime import Invocation
    from sandbox.standins import Message
    from sandbox.traces import Trace


@dataclass(frozen=True)
class Stretch:
    """What the sandbox ``sb`` recorded from the moment ``begin`` was called."""

    sb: Sandbox
    invocations_at: int
    ledger_at: int
    traces_at: int
    messages_at: int

    @classmethod
    def begin(cls, sb: Sandbox) -> Stretch:
        return cls(
            sb,
            len(sb.runtime.invocations) if sb.runtime else 0,
            len(sb.interceptor.ledger),
            len(sb.triggers.traces) if sb.triggers else 0,
            len(sb.outbox.messages),
        )

    def invocations(self) -> list[Invocation]:
        return self.sb.runtime.invocations[self.invocations_at :] if self.sb.runtime else []

    def calls(self) -> list[CallRecord]:
        """The AWS calls the functions made: the sandbox's own (a scenario, the pump, a
        request from outside) stand for the world around the stack and are not its doing."""
        return [c for c in self.sb.interceptor.ledger[self.ledger_at :] if c.function is not None]

    def traces(self) -> list[Trace]:
        return self.sb.triggers.traces[self.traces_at :] if self.sb.triggers else []

    def messages(self) -> list[Message]:
        return self.sb.outbox.messages[self.messages_at :]
