"""What a stretch of sandbox activity cost, counted from the sandbox's own records.

``Meter(sb).mark()`` begins a stretch (``sandbox.stretch``, as the demo's report does for a
step) and notes the provider stand-ins' call count; ``Meter.since(mark)`` counts what the
functions did in it: DynamoDB reads and writes, S3 operations, secret reads, model calls,
calls to the outside providers (CRM, enrichment, store: the stand-ins the scenarios wire in),
messages sent (SES, SMS, SNS), every other AWS call (queues, events, schedules, metrics...)
and the Lambda invocations caused downstream (anything not started by a Function URL
request). Calls made by the sandbox itself (the outside world) are not counted.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from sandbox.stretch import Stretch

if TYPE_CHECKING:
    from sandbox.core import Sandbox
    from sandbox.interceptor import CallRecord

DYNAMODB_READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"})
DYNAMODB_WRITES = frozenset(
    {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
)
SECRET_READS = frozenset(
    {("ssm", "GetParameter"), ("ssm", "GetParameters"), ("secretsmanager", "GetSecretValue")}
)
SENDS = frozenset(
    {
        ("ses", "SendEmail"),
        ("ses", "SendRawEmail"),
        ("sms-voice", "SendTextMessage"),
        ("sns", "Publish"),
    }
)


@dataclass(frozen=True)
class Cost:
    """Counts of what the functions did (or, divided, what one request did)."""

    reads: float = 0
    writes: float = 0
    s3: float = 0
    secrets: float = 0
    model: float = 0
    provider: float = 0
    sent: float = 0
    other: float = 0
    invoked: float = 0

    def per(self, requests: int) -> Cost:
        return Cost(*(getattr(self, f.name) / max(requests, 1) for f in fields(self)))

    def items(self) -> list[tuple[str, float]]:
        return [(f.name, getattr(self, f.name)) for f in fields(self)]


def cost_of(calls: Iterable[CallRecord], *, provider: int = 0, invoked: int = 0) -> Cost:
    """The cost of these calls (a stretch's: the functions' own, ``Stretch.calls``)."""
    counts = dict.fromkeys(("reads", "writes", "s3", "secrets", "model", "sent", "other"), 0)
    for call in calls:
        key = (call.service, call.operation)
        if call.service == "dynamodb" and call.operation in DYNAMODB_READS:
            counts["reads"] += 1
        elif call.service == "dynamodb" and call.operation in DYNAMODB_WRITES:
            counts["writes"] += 1
        elif call.service == "s3":
            counts["s3"] += 1
        elif key in SECRET_READS:
            counts["secrets"] += 1
        elif call.service == "bedrock":
            counts["model"] += 1
        elif key in SENDS:
            counts["sent"] += 1
        else:
            counts["other"] += 1
    return Cost(**counts, provider=provider, invoked=invoked)


@dataclass(frozen=True)
class Mark:
    stretch: Stretch
    provider: int


class Meter:
    """Counts one sandbox's activity between marks; ``watch`` adds a provider stand-in."""

    def __init__(self, sb: Sandbox) -> None:
        self.sb = sb
        self.provider_calls = 0
        self._watched: set[type] = set()
        self._inside = threading.local()
        self._lock = threading.Lock()

    def watch(self, stand_in: object) -> None:
        """Count every outermost call of ``stand_in``'s public methods (and of the object
        itself, for a transport), until the sandbox stops."""
        cls = type(stand_in)
        if cls in self._watched:
            return
        self._watched.add(cls)
        names = [n for n in vars(cls) if not n.startswith("_") or n == "__call__"]
        for name in names:
            original = vars(cls)[name]
            if callable(original) and not isinstance(original, staticmethod | classmethod | type):
                self.sb.patch(cls, name, self._counted(original))

    def _counted(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def counted(*args: Any, **kwargs: Any) -> Any:
            # A stand-in calling its own methods is still one call to the provider.
            if getattr(self._inside, "depth", 0) == 0:
                with self._lock:
                    self.provider_calls += 1
            self._inside.depth = getattr(self._inside, "depth", 0) + 1
            try:
                return method(*args, **kwargs)
            finally:
                self._inside.depth -= 1

        return counted

    def mark(self) -> Mark:
        return Mark(Stretch.begin(self.sb), self.provider_calls)

    def since(self, mark: Mark) -> Cost:
        return cost_of(
            mark.stretch.calls(),
            provider=self.provider_calls - mark.provider,
            invoked=sum(i.source != "url" for i in mark.stretch.invocations()),
        )
