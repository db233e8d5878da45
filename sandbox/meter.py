"""What a stretch of sandbox activity cost, counted from the sandbox's own records.

``Meter(sb).mark()`` notes where the interceptor's ledger, the runtime's invocations and the
provider stand-ins' call counts stand; ``Meter.since(mark)`` counts what the functions did
after it: DynamoDB reads and writes, S3 operations, secret reads, model calls, calls to the
outside providers (CRM, enrichment, store: the stand-ins the scenarios wire in), messages sent
(SES, SMS, SNS), every other AWS call (queues, events, schedules, metrics...) and the Lambda
invocations caused downstream (anything not started by a Function URL request). Calls made by the sandbox itself (the outside world) are not counted.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

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
    """The cost of these ledger records (only calls made by a function count)."""
    counts = dict.fromkeys(("reads", "writes", "s3", "secrets", "model", "sent", "other"), 0)
    for call in calls:
        if call.function is None:
            continue
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
    ledger: int
    invocations: int
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
        runtime = self.sb.runtime
        return Mark(
            len(self.sb.interceptor.ledger),
            len(runtime.invocations) if runtime else 0,
            self.provider_calls,
        )

    def since(self, mark: Mark) -> Cost:
        runtime = self.sb.runtime
        started = runtime.invocations[mark.invocations:] if runtime else []
        return cost_of(
            self.sb.interceptor.ledger[mark.ledger:],
            provider=self.provider_calls - mark.provider,
            invoked=sum(i.source != "url" for i in started),
        )
