"""What the demo prints: each step, what it caused, the state it left, and a summary table.

A step records where the logs stood when it began (invocations, AWS calls, pump traces,
messages sent) and prints the difference when it ends, so a scenario only says what it does
and what it expects; the report tells what the system actually did.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from sandbox.core import Sandbox
from sandbox.stretch import Stretch

_READS = ("Get", "Query", "Scan", "List", "Describe", "Head", "Receive", "BatchGet")


@dataclass
class Check:
    """One expectation about the end state of a scripted day."""

    name: str
    ok: bool
    detail: str = ""


@dataclass
class SystemResult:
    """The outcome of one system's scripted day."""

    key: str
    title: str
    steps: int = 0
    invocations: int = 0
    errors: int = 0
    calls: int = 0
    denied: int = 0
    refused: int = 0
    """Deliveries to this system that a trust, resource or key policy refused."""
    messages: int = 0
    checks: list[Check] = field(default_factory=list)
    crashed: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (
            self.crashed is None
            and all(c.ok for c in self.checks)
            and bool(self.checks)
            and not self.refused
        )


class Step:
    """The handle a scenario gets inside ``Report.step``."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)
        self.report.line(f"     {text}")

    def state(self, label: str, value: Any) -> None:
        text = str(value)
        self.report.line(f"     state  {label}: {text if len(text) <= 160 else text[:157] + '...'}")


class Report:
    """Prints a scripted day per system and keeps the numbers for the summary."""

    def __init__(
        self, sandbox: Sandbox, out: TextIO | None = None, *, verbose: bool = False
    ) -> None:
        self.sb = sandbox
        self.out = out or sys.__stdout__ or sys.stdout
        self.verbose = verbose
        self.results: list[SystemResult] = []
        self.current: SystemResult | None = None

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    @contextmanager
    def system(self, key: str, title: str, region: str) -> Iterator[SystemResult]:
        result = SystemResult(key, title)
        self.results.append(result)
        self.current = result
        self.line()
        self.line(
            f"== {title} ({key}) · {region} "
            + "=" * max(0, 60 - len(title) - len(key) - len(region))
        )
        started = time.monotonic()
        if self.sb.triggers is not None:
            for problem in self.sb.triggers.problems:
                if f"{self.sb.prefix}-{key}-" in problem:
                    self.line(f"  wiring: {problem}")
        try:
            yield result
        except Exception as err:  # a crashed scenario is a failed day, not a crashed demo

            result.crashed = f"{type(err).__name__}: {err}"
            self.line(f"  !! the scenario stopped: {result.crashed}")
            if self.verbose:
                self.line(traceback.format_exc())
        finally:
            result.seconds = time.monotonic() - started
            self.current = None

    @contextmanager
    def step(self, title: str) -> Iterator[Step]:
        result = self.current
        assert result is not None, "a step belongs to a system"
        result.steps += 1
        self.line(f"  {result.steps}. {title}")
        stretch = Stretch.begin(self.sb)
        handle = Step(self)
        try:
            yield handle
        finally:
            self._summarise(result, stretch)

    def _summarise(self, result: SystemResult, stretch: Stretch) -> None:
        invocations = stretch.invocations()
        calls = stretch.calls()
        own = f"{self.sb.prefix}-{result.key}-"
        result.invocations += sum(1 for i in invocations if i.function.startswith(own))
        result.errors += sum(1 for i in invocations if not i.ok and i.function.startswith(own))
        result.calls += sum(1 for c in calls if (c.function or "").startswith(own))
        result.denied += sum(
            1 for c in calls if c.denied is not None and (c.function or "").startswith(own)
        )
        for group in _runs(invocations):
            inv = group[0]
            status = "ok" if inv.ok else f"FAILED {inv.error_type}: {inv.error}"
            times = f" x{len(group)}" if len(group) > 1 else ""
            ms = sum(i.duration_s for i in group) * 1000
            self.line(
                f"     ran    {self._short(inv.function)} <- {inv.source}{times}  {status}  ({ms:.0f} ms)"
            )
            if not inv.ok and inv.traceback and self.verbose:
                self.line("            " + inv.traceback.replace("\n", "\n            "))
        for call in calls:
            if call.denied is not None:
                self.line(
                    f"     DENIED {self._short(call.function or '')}: {call.denied.requirement.action} on {call.denied.requirement.resource}"
                )
        writes = Counter(
            (self._short(c.function or ""), f"{c.service}:{c.operation}", _target(c.params))
            for c in calls
            if c.denied is None and c.status < 300 and not c.operation.startswith(_READS)
        )
        for (function, action, target), count in sorted(writes.items()):
            times = f" x{count}" if count > 1 else ""
            verb = "asked " if action.startswith("bedrock:") else "wrote "
            self.line(f"     {verb} {function}: {action} {target}{times}")
        for trace in stretch.traces():
            if trace.kind == "refused":
                self.line(f"     REFUSED {trace.source} -> {trace.target}: {trace.detail}")
                continue
            if trace.kind in (
                "lost",
                "filtered",
                "dropped",
                "denied",
                "unrouted",
                "on-failure",
                "dead-letter",
                "inactive",
                "unsupported",
            ):
                self.line(
                    f"     note   {trace.kind}: {trace.source} -> {trace.target} {trace.detail}".rstrip()
                )
        for message in stretch.messages():
            result.messages += int((message.function or "").startswith(own))
            subject = f' "{message.subject}"' if message.subject else ""
            text = message.text.strip().replace("\n", " ")
            text = text if len(text) <= 90 else text[:87] + "..."
            self.line(
                f"     sent   {message.channel} {message.sender} -> {', '.join(message.to)}{subject}: {text}"
            )

    def _short(self, function: str) -> str:
        return function.removeprefix(f"{self.sb.prefix}-")

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        result = self.current
        assert result is not None
        result.checks.append(Check(name, bool(ok), detail))
        mark = "ok  " if ok else "FAIL"
        self.line(f"     check  [{mark}] {name}" + (f" ({detail})" if detail else ""))
        return bool(ok)

    def summary(self, seconds: float) -> None:
        self.line()
        self.line("== Summary " + "=" * 69)
        triggers = self.sb.triggers
        for r in self.results:
            # Counted over the whole run: the clock is shared, so one system's schedules also
            # fire (and may be refused) during another system's day.
            own = f"{self.sb.prefix}-{r.key}-"
            r.refused = sum(
                1
                for x in (triggers.refusals if triggers else [])
                if own in x.source or own in x.target
            )
        header = f"{'system':<34} {'steps':>5} {'runs':>5} {'errors':>6} {'calls':>6} {'denied':>6} {'refused':>7} {'sent':>5} {'checks':>7} {'time':>6}  result"
        self.line(header)
        for r in self.results:
            passed = sum(1 for c in r.checks if c.ok)
            verdict = "ok" if r.ok else ("CRASHED" if r.crashed else "FAILED")
            self.line(
                f"{r.title + ' (' + r.key + ')':<34} {r.steps:>5} {r.invocations:>5} {r.errors:>6} {r.calls:>6} "
                f"{r.denied:>6} {r.refused:>7} {r.messages:>5} {f'{passed}/{len(r.checks)}':>7} {f'{r.seconds:.0f}s':>6}  {verdict}"
            )
        if triggers is not None:
            lost: dict[str, int] = {}
            for trace in triggers.traces:
                if trace.kind == "lost":
                    lost[trace.source] = lost.get(trace.source, 0) + 1
            for queue, count in sorted(lost.items()):
                self.line(
                    f"warning: {count} message(s) on {queue} lost to another mapping's filter"
                )
            for problem in triggers.problems:
                self.line(f"wiring: {problem}")
            refused = Counter((x.source, x.target, x.reason) for x in triggers.refusals)
            for (source, target, reason), count in refused.items():
                times = f" x{count}" if count > 1 else ""
                self.line(f"refused{times}: {source} -> {target}: {reason}")
        endpoint = self.sb.emulator.endpoint if self.sb.emulator else "-"
        self.line(f"scenarios {seconds:.1f} s; AWS emulator {endpoint}")


def _runs(invocations: list[Any]) -> list[list[Any]]:
    """Consecutive invocations of one function from one source with one outcome, grouped."""
    groups: list[list[Any]] = []
    for inv in invocations:
        last = groups[-1][0] if groups else None
        if (
            last is not None
            and (last.function, last.source, last.ok) == (inv.function, inv.source, inv.ok)
            and last.ok
        ):
            groups[-1].append(inv)
        else:
            groups.append([inv])
    return groups


def _target(params: dict[str, Any]) -> str:
    for key in (
        "TableName",
        "QueueUrl",
        "SecretId",
        "TopicArn",
        "Name",
        "FromEmailAddress",
        "Source",
        "modelId",
        "OriginationIdentity",
    ):
        if key in params:
            value = str(params[key])
            return value.rsplit("/", 1)[-1] if key == "QueueUrl" else value
    if "Bucket" in params:
        key = str(params.get("Key", ""))
        folder = key.rsplit("/", 1)[0] + "/*" if "/" in key else key
        return f"s3://{params['Bucket']}/{folder}"
    if "DetailTypes" in params:
        return ",".join(str(d) for d in params["DetailTypes"])
    return ""
