"""Run the scripted days: start the sandbox on the dev stack's graph, play each enabled
system's scenario, print the summary. Used by ``python -m sandbox demo`` and by the tests."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TextIO

from components.offline.engine import Graph
from components.offline.program import program_graph
from sandbox import scenarios
from sandbox.core import Sandbox
from sandbox.ops import report_day
from sandbox.report import Report, SystemResult
from sandbox.runtime import Resolver
from sandbox.scenarios import Scenario
from sandbox.standins import write_messages

TITLES = {
    "dm": "Duplicate contact merger",
    "ler": "Lead enricher",
    "ls": "Lead source attributor",
    "upsr": "Upsell recommender",
    "rrs": "Review request sender",
}


def enabled_systems(graph: Graph) -> list[str]:
    return list(graph.config.systems.enabled())


def play(
    sb: Sandbox,
    keys: Iterable[str],
    *,
    out: TextIO | None = None,
    verbose: bool = False,
) -> list[SystemResult]:
    """Play the scenarios of the systems ``keys`` in the running sandbox ``sb``; every enabled
    system is set up first (the whole stack runs, and shares the clock)."""
    enabled = sb.graph.config.systems.enabled()
    days = [(k, TITLES.get(k, k), enabled[k].region, scenarios.load(k)) for k in keys]
    others = [scenarios.load(k) for k in enabled if k not in {d[0] for d in days}]
    return play_days(
        sb, days, also_prepare=[o for o in others if o is not None], out=out, verbose=verbose
    )


def play_days(
    sb: Sandbox,
    days: Iterable[tuple[str, str, str, Scenario | None]],
    *,
    also_prepare: Iterable[Scenario] = (),
    out: TextIO | None = None,
    verbose: bool = False,
) -> list[SystemResult]:
    """Play each (key, title, region, scenario) day; print the summary; return the results."""
    report = Report(sb, out, verbose=verbose)
    started = time.monotonic()
    days = list(days)
    # The operator sets every system up before the day starts: the clock is shared, so one
    # system's day moves time for all of them and their schedules run too.
    for scenario in [*also_prepare, *(d[3] for d in days)]:
        if scenario is not None:
            scenario.prepare(sb)
    for key, title, region, scenario in days:
        with report.system(key, title, region) as result:
            if scenario is None:
                result.crashed = "no scenario written for this system yet"
                report.line("  (no scripted day for this system yet)")
                continue
            since = len(sb.runtime.invocations) if sb.runtime is not None else 0
            scenario.play(sb, report)
            report_day(sb, report, key, since)  # the day's business metrics and alarms
    report.summary(time.monotonic() - started)
    return report.results


def demo(
    keys: Iterable[str] | None = None,
    *,
    graph: Graph | None = None,
    resolver: Resolver | None = None,
    out: TextIO | None = None,
    verbose: bool = False,
    messages_to: str | None = None,
) -> list[SystemResult]:
    """Start a sandbox on ``graph`` (default: the dev stack), play, stop; with
    ``messages_to``, write every mail and SMS the day sent into that folder."""
    graph = graph or program_graph("dev")
    wanted = list(keys) if keys is not None else enabled_systems(graph)
    with Sandbox(graph, resolver=resolver) as sb:
        results = play(sb, [k for k in scenarios.ORDER if k in wanted], out=out, verbose=verbose)
        if messages_to:
            written = write_messages(sb.outbox.messages, messages_to)
            print(f"{len(written)} mail and SMS files written to {messages_to}/", flush=True)
        return results
