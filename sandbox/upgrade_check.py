"""``make upgrade-check FROM=<commit>``: an upgrade with work in flight, played in the sandbox.

1. The release at ``FROM`` (from git history, into a temporary directory) plays every system's
   scripted day in an AWS emulator this process runs, then stops with work in flight: a message
   it wrote on every consumed queue, the one-off schedules it created pending, its items in the
   tables (``sandbox/upgrade_old.py``, run in that release's tree).
2. This release takes over the same emulator state (``sandbox.takeover``: a deploy over
   existing resources, the old pump's clock and positions), every scenario's stand-ins set up
   again, and the clock moves 24 hours: every recurring schedule fires, every one-off schedule
   comes due, every returned message uses up its receives.
3. A table, per kind of work in flight (each consumed queue, each recurring schedule, each kind
   of one-off schedule), says how it ended. The check fails on a message of the old release
   that ended without a trace (deleted but never handled, or still waiting after 24 hours) or
   was handled twice, and on a schedule that did not fire or whose run failed.

A message refused by the new code (``handlers.common.batch.Unusable``) ends in its queue's DLQ:
"dead-lettered", counted by the DLQ's depth metric and its alarm, and re-drivable. The old
release runs with this checkout's ``.venv`` when that has every package its ``uv.lock`` pins,
else with an environment ``uv sync`` builds from its own lock.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.core import Sandbox
from sandbox.graph import Topology
from sandbox.records import failed_ids
from sandbox.runtime import Invocation
from testsupport import tools

ROOT = Path(__file__).resolve().parents[1]
HOURS = 7 * 24
"""Long enough for every schedule to come due, the weekly ones too."""


@dataclass
class Row:
    """One kind of work in flight and how it ended."""

    kind: str
    name: str
    in_flight: int
    outcomes: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    note: str = ""
    """Said when nothing ended: a queue new in this release had nothing in flight."""

    @property
    def ok(self) -> bool:
        return not self.problems


def old_tree(commit: str, into: Path) -> Path:
    """The files of ``commit`` in ``into`` (``git archive``: no worktree, nothing to clean)."""
    into.mkdir(parents=True)
    archive = subprocess.run(  # noqa: S603 - git with fixed arguments and a commit name
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit],  # noqa: S607
        check=True, capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)  # noqa: S603, S607
    return into


def locked_packages(lock: str) -> set[tuple[str, str]]:
    """(name, version) of every package a uv.lock pins, but the project's own entry (its
    version moves every release)."""
    pins = set(re.findall(r'^\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"', lock, flags=re.M))
    return {(name, version) for name, version in pins if name != "crm-automations"}


def python_for(tree: Path) -> str:
    """This checkout's interpreter when it has every package ``tree`` locks, at the same version
    (a release that only added packages, a linter say, runs the old code unchanged), else an
    environment ``uv sync`` builds from the old tree's own lock."""
    ours = locked_packages((ROOT / "uv.lock").read_text())
    theirs = locked_packages((tree / "uv.lock").read_text())
    if theirs <= ours:
        return sys.executable
    subprocess.run([tools.uv(), "sync", "--frozen", "--quiet"], cwd=tree, check=True)  # noqa: S603
    return str(tree / ".venv" / "bin" / "python")


def run_old(tree: Path, python: str, endpoint: str, stack: str) -> Path:
    """Play the old release's days against ``endpoint``; the hand-off file it wrote."""
    shutil.copy(ROOT / "sandbox" / "upgrade_old.py", tree / "_upgrade_old.py")
    handoff = tree / "handoff.json"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    log = tree / "old-release.log"
    with log.open("w") as out:
        done = subprocess.run(  # noqa: S603 - an interpreter and the script copied above
            [python, "_upgrade_old.py", "--endpoint", endpoint, "--stack", stack,
             "--handoff", str(handoff)],
            cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT, check=False,
        )
    if done.returncode != 0 or not handoff.exists():
        tail = log.read_text()[-3000:]
        raise SystemExit(f"the old release's sandbox failed (exit {done.returncode}):\n{tail}")
    for line in log.read_text().splitlines():
        if line.startswith("queues "):
            print(f"  old release: {line}", flush=True)
    return handoff


def _moto_queue(name: str, region: str) -> Any:
    """moto's own queue object: read without receiving (a receive counts toward the DLQ)."""
    # moto's internal backends: only the check that reads a queue without receiving needs them
    from moto.sqs.models import sqs_backends

    from components.offline.engine import ACCOUNT_ID  # the emulator's MOTO_ACCOUNT_ID

    return sqs_backends[ACCOUNT_ID][region].queues[name]


def deployed_queues() -> frozenset[str]:
    """Every queue in the emulator now: read after the old release ran and before this checkout
    deploys, it is the old release's."""
    # moto's internal backends: read without a request, as _moto_queue
    from moto.sqs.models import sqs_backends

    from components.offline.engine import ACCOUNT_ID  # the emulator's MOTO_ACCOUNT_ID

    return frozenset(name for backend in sqs_backends[ACCOUNT_ID].values() for name in backend.queues)


def message_ids(name: str, region: str) -> set[str]:
    """Every message on a queue, visible or in flight."""
    return {m.id for m in _moto_queue(name, region)._messages}


@dataclass(frozen=True)
class InFlight:
    """What the old release left, read before the new code runs."""

    queues: dict[str, set[str]]  # consumed queue -> message ids
    dead_letters: dict[str, set[str]]  # its DLQ -> message ids already there
    one_off: dict[str, list[str]]  # kind (group) -> schedule names


def in_flight(sb: Sandbox) -> InFlight:
    t = sb.topology
    queues: dict[str, set[str]] = {}
    dead: dict[str, set[str]] = {}
    for arn in dict.fromkeys(m.queue_arn for m in t.queue_mappings):
        q = t.queue_by_arn(arn)
        assert q is not None
        queues[q.name] = message_ids(q.name, q.region)
        if q.dead_letter_arn:
            dlq = q.dead_letter_arn.rsplit(":", 1)[-1]
            dead[dlq] = message_ids(dlq, q.region)
    one_off: dict[str, list[str]] = {}
    assert sb.triggers is not None
    declared = {s.name for s in t.schedules}
    for region in sorted({f.region for f in t.functions.values()}):
        scheduler = sb.internal("scheduler", region)
        for item in scheduler.list_schedules().get("Schedules", []):
            if item["Name"] not in declared:
                one_off.setdefault(item.get("GroupName", "default"), []).append(item["Name"])
    return InFlight(queues, dead, one_off)


def _handled(invocations: list[Invocation], source: str) -> tuple[Counter[str], set[str]]:
    """How many times each message of ``source`` was acknowledged (delivered and not failed),
    and which were acknowledged although the handler logged an error about them: dropped with
    a log line as their only trace (0.1.0's ``batch.Unusable``)."""
    handled: Counter[str] = Counter()
    errored: set[str] = set()
    for inv in invocations:
        if inv.source != source:
            continue
        ids = [r["messageId"] for r in inv.event.get("Records", [])]
        failed = failed_ids(inv, ids, True)
        acknowledged = [i for i in ids if i not in failed]
        handled.update(acknowledged)
        errored.update(i for i in acknowledged if i in _error_records(inv.logs))
    return handled, errored


def _error_records(logs: str) -> set[str]:
    """The records an invocation's ERROR log lines name (Powertools' JSON lines)."""
    named = set()
    for line in logs.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("level") == "ERROR" and entry.get("record"):
            named.add(str(entry["record"]))
    return named


def judge(sb: Sandbox, before: InFlight, old_queues: frozenset[str] | None = None) -> list[Row]:
    """How each kind of work in flight ended; a queue not in ``old_queues`` (new in this
    release) could hold nothing of the old release's, so finding it empty is no problem."""
    t: Topology = sb.topology
    assert sb.runtime is not None and sb.triggers is not None
    invocations = sb.runtime.invocations
    alarms = {a.name for a in t.alarms}
    rows: list[Row] = []
    for name, ids in before.queues.items():
        q = next(q for q in t.queues if q.name == name)
        consumer = ", ".join(m.function for m in t.queue_mappings if m.queue_arn == q.arn)
        row = Row("queue", f"{name} -> {consumer}", len(ids))
        handled, errored = _handled(invocations, f"sqs:{name}")
        dlq = q.dead_letter_arn.rsplit(":", 1)[-1] if q.dead_letter_arn else ""
        dead = message_ids(dlq, q.region) - before.dead_letters.get(dlq, set()) if dlq else set()
        waiting = message_ids(name, q.region)
        for i in ids:
            if handled[i] > 1:
                row.outcomes["done twice"] += 1
                row.problems.append(f"message {i} handled {handled[i]} times")
            elif handled[i] == 1 and i in errored:
                row.outcomes["dropped"] += 1
                row.problems.append(f"message {i} acknowledged after an error: dropped")
            elif handled[i] == 1:
                row.outcomes["processed"] += 1
            elif i in dead:
                # Counted by the DLQ's depth metric; alarmed where the stack has alarms on.
                row.outcomes[f"dead-lettered to {dlq}, counted"] += 1
                if alarms and f"{dlq}-depth" not in alarms:
                    row.problems.append(f"{dlq} has no depth alarm")
            elif i in waiting:
                row.outcomes["still waiting"] += 1
                row.problems.append(f"message {i} still on {name} after {HOURS} h")
            else:
                row.outcomes["dropped"] += 1
                row.problems.append(f"message {i} deleted without being handled")
        if not ids and old_queues is not None and name not in old_queues:
            row.note = "new in this release: nothing of the old one's could be here"
        elif not ids:
            row.problems.append("the old release left no message here")
        rows.append(row)
    for s in t.schedules:
        runs = [i for i in invocations if i.source == f"schedule:{s.name}"]
        row = Row("schedule", f"{s.name} {s.expression}", 1)
        ok = sum(1 for i in runs if i.ok)
        row.outcomes[f"fired, {ok} run(s) processed"] += 1 if runs else 0
        if not runs:
            row.outcomes["never fired"] += 1
            row.problems.append(f"{s.name} did not fire in {HOURS} h")
        elif ok == 0:
            row.problems.append(f"every run of {s.name} failed: {runs[-1].error}")
        rows.append(row)
    sent = Counter(tr.source for tr in sb.triggers.traces if tr.kind == "schedule")
    for group, names in sorted(before.one_off.items()):
        row = Row("one-off", f"at() schedules in {group}", len(names))
        for n in names:
            fired = sent[n] + sum(1 for i in invocations if i.source == f"schedule:{n}")
            if fired == 1:
                row.outcomes["fired once"] += 1
            else:
                row.outcomes["fired twice" if fired > 1 else "never fired"] += 1
                row.problems.append(f"{n} fired {fired} times")
        rows.append(row)
    if not before.one_off:
        rows.append(Row("one-off", "at() schedules", 0, problems=["the old release left none"]))
    return rows


def item_states(sb: Sandbox) -> dict[str, Counter[str]]:
    """Each table's items by their ``state`` (``-`` for items without one)."""
    return {
        t.name: Counter(str(item.get("state", "-")) for item in sb.items(t.name))
        for t in sb.topology.tables
    }


def states_table(before: dict[str, Counter[str]], after: dict[str, Counter[str]]) -> str:
    """The tables' items by state at the hand-over and a week later (no verdict: items move
    on, expire and are deleted by design; the rows above judge the work)."""
    def shown(states: Counter[str]) -> str:
        return ", ".join(f"{s} {n}" for s, n in sorted(states.items())) or "empty"

    lines = ["items by state: at the hand-over -> a week later"]
    for name in before:
        lines.append(f"  {name}: {shown(before[name])} -> {shown(after[name])}")
    return "\n".join(lines)


def table(rows: list[Row]) -> str:
    width = max(len(r.name) for r in rows)
    lines = [f"{'kind':<9} {'work in flight':<{width}} {'n':>3}  how it ended"]
    for r in rows:
        ended = ", ".join(f"{n} {what}" for what, n in r.outcomes.items() if n) or r.note or "-"
        mark = "" if r.ok else "  FAIL: " + "; ".join(r.problems[:3])
        lines.append(f"{r.kind:<9} {r.name:<{width}} {r.in_flight:>3}  {ended}{mark}")
    return "\n".join(lines)


def check(commit: str, stack: str = "dev") -> tuple[list[Row], str, str]:
    """Play the upgrade from ``commit``; the rows, the items by state and the timing."""
    # the program and the sandbox load Pulumi and every handler: not for `--help` or the table
    from components.offline.program import program_graph
    from sandbox import emulator, scenarios
    from sandbox.play import enabled_systems
    from sandbox.takeover import Takeover

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="upgrade-check-") as tmp:
        tree = old_tree(commit, Path(tmp) / "old")
        python = python_for(tree)
        with emulator.running() as emu:
            handoff = run_old(tree, python, emu.endpoint, stack)
            old_queues = deployed_queues()
            old_s = time.monotonic() - started
            graph = program_graph(stack)
            with Sandbox(graph, takeover=Takeover.from_handoff(emu.endpoint, handoff)) as sb:
                for key in enabled_systems(graph):
                    scenario = scenarios.load(key)
                    if scenario is not None:
                        scenario.prepare(sb)  # the outside world's stand-ins, as the old run had
                before = in_flight(sb)
                items = item_states(sb)
                sb.advance(hours=HOURS)
                rows = judge(sb, before, old_queues)
                states = states_table(items, item_states(sb))
    total = time.monotonic() - started
    return rows, states, f"old release {old_s:.0f} s, upgrade and {HOURS} h {total - old_s:.0f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.upgrade_check", description=__doc__)
    parser.add_argument("--from", dest="commit", required=True, help="the release upgraded from")
    parser.add_argument("--stack", default="dev", help="a stack, or several: dev,prod")
    args = parser.parse_args(argv)
    failures = 0
    for stack in args.stack.split(","):
        print(f"upgrade check: {args.commit} -> this checkout, {stack} stack", flush=True)
        rows, states, timing = check(args.commit, stack)
        print(states)
        print(table(rows))
        failed = [r for r in rows if not r.ok]
        failures += len(failed)
        print(f"{len(rows) - len(failed)} of {len(rows)} kinds of work in flight ended well ({timing})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

