"""The split weekly run at scale: each stage's largest invocation, the invocations, the cost.

``bench_dm.py --sizes`` starts one split run per size (``start``, all at once) and reports
each (``finish``), then says whether the largest invocations are flat with size (``flatness``).
A run is driven by ``python -m benchmarks.split_scale SIZE SEED CAP``: a new interpreter that
imports only the split run's code, from which every invocation of every stage
(``handlers/duplicate_merger/split.py``) is forked, so each starts as a Lambda invocation
does (the code imported, no data) and from the same parent at every size. The shards are
files; each invocation reports its CPU seconds and its peak resident memory (VmHWM, the
parent's pages included). The read stage's invocations get their chunk from a file, as
dm-block gets HubSpot's pages. ``check`` runs the single and the split run on one generated
CRM and compares their pairs and scores (the test does the same at 3,000 contacts)."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from handlers.duplicate_merger import split
from handlers.duplicate_merger.matcher import Thresholds
from handlers.duplicate_merger.pipeline import (
    decode_message,
    encode_messages,
    profiles_from,
    run_blocking,
    score_message,
)
from handlers.duplicate_merger.shards import MemoryShards

READ_CHUNK = 10_000
"""Contacts per read-stage invocation (100 HubSpot pages)."""
FLAT = 1.1
"""How much a stage's largest invocation may grow from the smallest size to the largest and
still be flat (the largest of more partitions is a little larger by chance alone)."""
STAGE_MB = 512
"""Memory the cost below assumes for every split-run function."""
LAMBDA_GB_S = 0.0000166667
LAMBDA_REQUEST = 0.20 / 1e6
S3_PUT = 0.005 / 1000
S3_GET = 0.0004 / 1000
SQS_REQUEST = 0.40 / 1e6
"""us-east-1 list prices: "AWS Lambda pricing" (https://aws.amazon.com/lambda/pricing/, x86,
per GB-second and per request), "Amazon S3 pricing" (https://aws.amazon.com/s3/pricing/, S3
Standard PUT and GET) and "Amazon SQS pricing" (https://aws.amazon.com/sqs/pricing/,
standard queue)."""


class DirShards:
    """Shards as files under one directory (the benchmark's S3)."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)

    def put(self, key: str, data: bytes) -> None:
        path = self.root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def get(self, key: str) -> bytes:
        return (self.root / key).read_bytes()

    def keys(self, prefix: str) -> list[str]:
        folder = self.root / prefix.rsplit("/", 1)[0] if "/" in prefix else self.root
        if not folder.is_dir():
            return []
        found = (str(p.relative_to(self.root)) for p in folder.rglob("*") if p.is_file())
        return sorted(k for k in found if k.startswith(prefix))

    def delete(self, key: str) -> None:
        (self.root / key).unlink(missing_ok=True)


def _peak_mb(field: str = "VmHWM") -> float:
    """This process's peak resident memory (``VmRSS``: its resident memory now), in MB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def _invoke(job: tuple[str, str, split.SplitPlan, int, int]) -> dict[str, Any]:
    """One invocation of one stage in this (fresh) process."""
    stage, root, plan, part, chunks = job
    shards = DirShards(root)
    cpu = time.process_time()
    sent = 0
    if stage == "read":
        contacts = json.loads(Path(root, "input", f"{part:06d}.json").read_text("utf-8"))
        split.read_stage(shards, plan, part, map(tuple, contacts))
    elif stage == "count":
        split.count_stage(shards, plan, part, chunks)
    elif stage == "join":
        split.join_stage(shards, plan, part, chunks)
    elif stage == "tally":
        split.tally_stage(shards, plan, part)
    elif stage == "reduce":
        split.reduce_stage(shards, plan, chunks)
    elif stage == "evidence":
        split.evidence_stage(shards, plan, part)
    elif stage == "baseline":
        split.baseline_stage(shards, plan)
    else:
        sent = split.emit_stage(shards, plan, part, lambda bodies: sum(1 for _ in bodies))
    return {"cpu_s": time.process_time() - cpu, "mb": _peak_mb(), "messages": sent}


def _write_inputs(size: int, seed: int, root: str) -> int:
    """The generated contacts as read chunks (in a forked child: the parent, whose memory
    every forked invocation starts with, never holds them or the generator)."""
    # Imported here, after the fork: a Lambda invocation has no generator in its memory.
    from testsupport import crm_generator as synthetic

    chunks = 0
    batch: list[Any] = []
    folder = Path(root, "input")
    folder.mkdir()
    for cid, props, _ in synthetic.stream(size, seed=seed):
        batch.append([cid, props])
        if len(batch) == READ_CHUNK:
            (folder / f"{chunks:06d}.json").write_text(json.dumps(batch), "utf-8")
            chunks, batch = chunks + 1, []
    if batch:
        (folder / f"{chunks:06d}.json").write_text(json.dumps(batch), "utf-8")
        chunks += 1
    return chunks


@dataclass(frozen=True)
class StageFigures:
    """One stage of one split run: its invocations and its largest invocation."""

    invocations: int
    largest_cpu_s: float
    largest_mb: float
    total_cpu_s: float


@dataclass(frozen=True)
class SplitFigures:
    """One split run measured: per stage, and the run's totals."""

    size: int
    parent_mb: float
    stages: dict[str, StageFigures]
    objects: int
    stored_bytes: int
    messages: int
    cost: float
    wall_s: float

    @property
    def largest_mb(self) -> float:
        return max(s.largest_mb for s in self.stages.values())


def _run(size: int, seed: int, cap: int, root: str, emit: Callable[[dict[str, Any]], None]) -> None:
    """The split run, measured, in this small process; ``emit`` gets one record per stage."""
    plan = split.SplitPlan.for_contacts("bench", size, cap=cap)
    fork = mp.get_context("fork")
    with fork.Pool(1) as writer:
        chunks = writer.apply(_write_inputs, (size, seed, root))
    parent = _peak_mb("VmRSS")  # what a forked invocation starts with
    emit({"start": True, "chunks": chunks, "parts": plan.parts, "parent_mb": parent})
    workers = max(1, min(2, os.cpu_count() or 1))
    started = time.perf_counter()
    # fork: each invocation starts with the code imported and no data, as a warm Lambda.
    with fork.Pool(workers, maxtasksperchild=1) as pool:
        for stage in split.STAGES:
            single = stage in ("reduce", "baseline")
            count = chunks if stage == "read" else 1 if single else plan.parts
            jobs = [(stage, root, plan, part, chunks) for part in range(count)]
            emit({"stage": stage, "results": list(pool.imap_unordered(_invoke, jobs))})
    files = [p for p in Path(root).rglob("*") if p.is_file() and p.parts[-2] != "input"]
    emit({"objects": len(files), "stored": sum(p.stat().st_size for p in files),
          "wall_s": time.perf_counter() - started})


@dataclass(frozen=True)
class Started:
    """A split run under way: its size, its process and the file its records go to."""

    size: int
    process: subprocess.Popen[bytes]
    records: IO[bytes]


def start(size: int, seed: int, cap: int) -> Started:
    """The split run of ``size`` generated contacts, started (``finish`` reports it).

    The run is driven from a new interpreter that imports this module only (``python -m
    benchmarks.split_scale``), so every invocation forks from the same small parent at every
    size, never from the benchmark that asked (its memory would count in every peak). Its
    records go to a file, not a pipe: several runs go at once and are read one by one."""
    command = [sys.executable, "-m", "benchmarks.split_scale", str(size), str(seed), str(cap)]
    root_dir = Path(__file__).resolve().parents[1]
    records = tempfile.TemporaryFile()  # noqa: SIM115 (closed by finish)
    return Started(size, subprocess.Popen(command, cwd=root_dir, stdout=records), records)


def measure(size: int, seed: int, cap: int, *, say: Callable[[str], None] = print) -> SplitFigures:
    """The split run of ``size`` generated contacts, stage by stage, one line per stage."""
    return finish(start(size, seed, cap), say=say)


def finish(run: Started, *, say: Callable[[str], None] = print) -> SplitFigures:
    """A started split run's figures, once it ends: one line per stage, then the run's."""
    size = run.size
    stages: dict[str, StageFigures] = {}
    invocations = messages = 0
    gb_s = parent = 0.0
    if run.process.wait():
        raise RuntimeError(f"split run of {size:,} contacts failed ({run.process.returncode})")
    with run.records:
        run.records.seek(0)
        records = [json.loads(line) for line in run.records]
    for record in records:
        if "start" in record:
            parent = record["parent_mb"]
            say(f"  split run of {size:,} contacts: {record['chunks']} read chunks of "
                f"{READ_CHUNK:,}, {record['parts']} partitions of about "
                f"{split.PARTITION_CONTACTS:,} contacts; each invocation forks from a parent of "
                f"{parent:.0f} MB (the code imported, no data), counted in its peak")
            say(f"    {'stage':<9} {'invocations':>11} {'largest CPU s':>13} {'largest MB':>10} "
                f"{'total CPU s':>11}")
        elif "stage" in record:
            results = record["results"]
            figures = StageFigures(len(results), max(r["cpu_s"] for r in results),
                                   max(r["mb"] for r in results), sum(r["cpu_s"] for r in results))
            stages[record["stage"]] = figures
            invocations += figures.invocations
            gb_s += figures.total_cpu_s * STAGE_MB / 1024
            messages += sum(r["messages"] for r in results)
            say(f"    {record['stage']:<9} {figures.invocations:>11,} {figures.largest_cpu_s:>13.1f} "
                f"{figures.largest_mb:>10.0f} {figures.total_cpu_s:>11.1f}")
        else:
            objects, stored, wall = record["objects"], record["stored"], record["wall_s"]
    gets = 3 * objects  # every shard is read by one stage, the group shards by three
    cost = (gb_s * LAMBDA_GB_S + invocations * LAMBDA_REQUEST + objects * S3_PUT
            + gets * S3_GET + (invocations + messages) * SQS_REQUEST)
    say(f"    {invocations:,} invocations, {objects:,} shard objects ({stored / 1e6:,.0f} MB), "
        f"{messages:,} block messages; {wall:.0f} s here on 2 processes; one run's cost about "
        f"${cost:.2f} (Lambda at {STAGE_MB} MB billed for its CPU seconds, S3 requests, SQS "
        "requests)")
    return SplitFigures(size, parent, stages, objects, stored, messages, cost, wall)


def flatness(runs: Sequence[SplitFigures], single_mb: float, single_source: str) -> list[str]:
    """Whether each stage's largest invocation is flat from the smallest size to the largest
    (within ``FLAT``), and the largest against the single run's peak at the largest size."""
    small, large = min(runs, key=lambda r: r.size), max(runs, key=lambda r: r.size)
    grown = {
        stage: large.stages[stage].largest_mb / small.stages[stage].largest_mb
        for stage in large.stages
    }
    worst = max(grown, key=lambda stage: grown[stage])
    flat = grown[worst] <= FLAT
    lines = [
        f"  split run's largest invocations from {small.size:,} to {large.size:,} contacts: "
        + ("flat" if flat else "NOT flat")
        + f" (most grown: {worst}, {small.stages[worst].largest_mb:.0f} -> "
        f"{large.stages[worst].largest_mb:.0f} MB, x{grown[worst]:.2f}; flat is at most x{FLAT})"
    ]
    share = large.largest_mb / single_mb
    lines.append(
        f"  largest invocation at {large.size:,}: {large.largest_mb:.0f} MB = {share:.3f} of the "
        f"single run's peak ({single_mb:,.0f} MB, {single_source}); target at most 0.1: "
        + ("met" if share <= 0.1 else "NOT met")
    )
    return lines


def _main(argv: list[str]) -> int:
    size, seed, cap = (int(a) for a in argv)

    def emit(record: dict[str, Any]) -> None:
        print(json.dumps(record), flush=True)

    with tempfile.TemporaryDirectory() as root:
        _run(size, seed, cap, root, emit)
    return 0


def check(size: int, seed: int, cap: int, *, say: Callable[[str], None] = print) -> bool:
    """Whether the split run gives the single run's pairs and scores on ``size`` contacts."""
    # Imported here: the module is also the split run's small parent (``_main``).
    from testsupport import crm_generator as synthetic

    contacts = synthetic.generate(size, seed=seed).contacts
    bands = Thresholds(automatic=12.0, propose=0.0)

    def scored(bodies: Iterable[str]) -> dict[str, float]:
        return {
            p.scored.pair_key: p.scored.score
            for body in bodies
            for p in score_message(decode_message(body), bands).pairs
        }

    single = scored(encode_messages(run_blocking("check", profiles_from(contacts), cap=cap)))
    bodies: list[str] = []

    def send(batch: Iterable[str]) -> int:
        before = len(bodies)
        bodies.extend(batch)
        return len(bodies) - before

    plan = split.SplitPlan.for_contacts("check", size, cap=cap, partition_contacts=2_000)
    chunked = [contacts[i : i + READ_CHUNK // 4] for i in range(0, size, READ_CHUNK // 4)]
    split.run_split(chunked, MemoryShards(), plan, send)
    same = scored(bodies) == single
    say(f"  split run == single run on {size:,} contacts ({plan.parts} partitions): "
        f"{len(single):,} pairs, {'the same pairs and scores' if same else 'DIFFERENT'}")
    return same


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
