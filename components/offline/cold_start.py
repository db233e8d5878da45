"""A cold first invocation predicted at a function's memory, and the INIT phase it bills.

Lambda gives a function CPU in proportion to its memory: one vCPU at 1,769 MB (AWS Lambda
Developer Guide, "Configure Lambda function memory":
https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). A cold first
invocation is predicted as

    CPU of import and first call, scaled by 1,769 MB / memory (at most one vCPU)
    + each AWS call the first request made, at its in-region latency
    + one new connection (DNS, TCP, TLS) per client that made a call
    + each outside HTTPS call (HubSpot, Shopify...), at the outside figure

with the latencies from ``latencies.yaml`` (each with its source or stated assumption) and the
calls recorded, not listed by hand: ``benchmarks/bench_init.py`` records the boto3 calls of a
function's first request in the sandbox.

Since 1 August 2025 Lambda bills the INIT phase of ZIP functions on managed runtimes like the
invoke phase (AWS Compute Blog, "AWS Lambda standardizes billing for INIT Phase":
https://aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase). The INIT
this code controls is the import of the handler module: ``cold_starts.yaml`` keeps each
function's import CPU at one vCPU (``bench_init.py --record`` writes it), and ``make cost``
prices it at the plan's memory per cold start (:func:`init_gb_seconds`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
LATENCIES = HERE / "latencies.yaml"
COLD_STARTS = HERE / "cold_starts.yaml"

FULL_VCPU_MB = 1769
"""At 1,769 MB a function has the equivalent of one vCPU (the memory page above)."""
PUBLIC_TARGET_MS = 1500.0
"""Issue 41's target for a public surface's predicted first invocation."""


class ColdStartError(ValueError):
    """A latency or cold-start file that cannot be used (names the file and the key)."""


def cpu_share(memory_mb: float) -> float:
    """The share of one vCPU a function of ``memory_mb`` gets (at most one)."""
    if memory_mb <= 0:
        raise ValueError("memory_mb must be positive")
    return min(1.0, memory_mb / FULL_VCPU_MB)


def at_memory(cpu_ms: float, memory_mb: float) -> float:
    """CPU work measured at one vCPU, as time at ``memory_mb``'s share of a vCPU."""
    return cpu_ms / cpu_share(memory_mb)


@dataclass(frozen=True)
class Latencies:
    """In-region waits, ms: per AWS call (``service`` or ``service.Operation``), per new
    connection, per outside HTTPS call; ``default_ms`` for a service the file does not name."""

    calls: Mapping[str, float]
    connect_ms: float
    outside_ms: float
    default_ms: float

    def known(self, service: str, operation: str) -> bool:
        return f"{service}.{operation}" in self.calls or service in self.calls

    def call_ms(self, service: str, operation: str) -> float:
        found = self.calls.get(f"{service}.{operation}", self.calls.get(service))
        return self.default_ms if found is None else found


def load_latencies(path: Path = LATENCIES) -> Latencies:
    data = yaml.safe_load(path.read_text()) or {}
    try:
        calls = {str(k): float(v["ms"]) for k, v in (data.get("calls") or {}).items()}
        return Latencies(
            calls=calls,
            connect_ms=float(data["connect"]["ms"]),
            outside_ms=float(data["outside_https"]["ms"]),
            default_ms=float(data["default"]["ms"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ColdStartError(
            f"{path.name}: needs calls.<service>.ms, connect.ms, outside_https.ms, default.ms"
        ) from err


@dataclass(frozen=True)
class Call:
    """One AWS call a first request made, and the client (connection pool) that made it."""

    service: str
    operation: str
    client: int = 0


@dataclass(frozen=True)
class Prediction:
    """A first invocation's parts, ms."""

    cpu_ms: float
    """Import and first call's CPU at the function's memory."""
    aws_ms: float
    connect_ms: float
    outside_ms: float
    calls: int
    connections: int

    @property
    def total_ms(self) -> float:
        return self.cpu_ms + self.aws_ms + self.connect_ms + self.outside_ms

    @property
    def over_target(self) -> bool:
        return self.total_ms > PUBLIC_TARGET_MS


def predict(
    cpu_ms: float,
    memory_mb: float,
    calls: Iterable[Call],
    outside_calls: int,
    latencies: Latencies,
) -> Prediction:
    """A first invocation at ``memory_mb`` from the CPU measured at one vCPU and the calls."""
    made = list(calls)
    clients = {c.client for c in made}
    return Prediction(
        cpu_ms=at_memory(cpu_ms, memory_mb),
        aws_ms=sum(latencies.call_ms(c.service, c.operation) for c in made),
        connect_ms=latencies.connect_ms * (len(clients) + outside_calls),
        outside_ms=latencies.outside_ms * outside_calls,
        calls=len(made),
        connections=len(clients) + outside_calls,
    )


def summary(calls: Iterable[Call]) -> str:
    """``dynamodb.GetItem x2, ssm.GetParameter``: the calls by count, in first-made order."""
    counted = Counter(f"{c.service}.{c.operation}" for c in calls)
    return ", ".join(k if n == 1 else f"{k} x{n}" for k, n in counted.items()) or "-"


# INIT billing -------------------------------------------------------------------------------


def load_cold_starts(path: Path = COLD_STARTS) -> dict[str, float]:
    """Function (seed name) -> the import CPU of its handler module at one vCPU, ms."""
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    try:
        return {str(k): float(v) for k, v in (data.get("import_cpu_ms") or {}).items()}
    except (TypeError, ValueError, AttributeError) as err:
        raise ColdStartError(f"{path.name}: import_cpu_ms maps a function to milliseconds") from err


def init_gb_seconds(import_cpu_ms: float, memory_mb: float, cold_starts: float) -> float:
    """GB-seconds billed for ``cold_starts`` INIT phases of a handler whose import costs
    ``import_cpu_ms`` at one vCPU: the import takes longer below 1,769 MB and is billed at the
    memory configured."""
    return cold_starts * at_memory(import_cpu_ms, memory_mb) / 1000 * memory_mb / 1024


def write_cold_starts(figures: Mapping[str, float], note: str, path: Path = COLD_STARTS) -> None:
    """Keep ``figures`` (function -> import CPU ms at one vCPU) for ``make cost``."""
    body: dict[str, Any] = {"import_cpu_ms": {k: round(v, 1) for k, v in sorted(figures.items())}}
    header = (
        "# Each function's handler import, CPU ms at one vCPU: the INIT phase `make cost` bills per\n"
        "# cold start (components/offline/cold_start.py). Written by\n"
        "# `.venv/bin/python benchmarks/bench_init.py --record`; not run by `make cost`.\n"
        + "".join(f"# {line}\n" for line in note.splitlines())
    )
    path.write_text(header + yaml.safe_dump(body, sort_keys=False))
