"""The split weekly run at scale: each stage's largest invocation, the invocations, the cost.

``bench_dm.py --sizes`` calls ``measure`` per size after the single run's scale line. Every
invocation of every stage (``handlers/duplicate_merger/split.py``) runs in its own process,
forked from a parent that holds no contacts (as a Lambda invocation starts with the code
imported and nothing else), with the shards in files; each reports its CPU seconds and its
peak resident memory (VmHWM). The read stage's invocations get their chunk from a file, as
dm-block gets HubSpot's pages. ``check`` runs the single and the split run on one generated
CRM and compares their pairs and scores (the test does the same at 3,000 contacts).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

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
from testsupport import crm_generator as synthetic

READ_CHUNK = 10_000
"""Contacts per read-stage invocation (100 HubSpot pages)."""
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


def _peak_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
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


def _stage(pool: Any, stage: str, root: str, plan: split.SplitPlan, parts: int,
           chunks: int) -> list[dict[str, Any]]:
    jobs = [(stage, root, plan, part, chunks) for part in range(parts)]
    return list(pool.imap_unordered(_invoke, jobs))


def _write_inputs(size: int, seed: int, root: str, out: Any) -> None:
    """The generated contacts as read chunks (in its own process: the parent, whose memory
    every forked invocation starts with, never holds them)."""
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
    out.put(chunks)


def measure(size: int, seed: int, cap: int, *, say: Callable[[str], None] = print) -> None:
    """The split run of ``size`` generated contacts, stage by stage, one line per stage."""
    plan = split.SplitPlan.for_contacts("bench", size, cap=cap)
    with tempfile.TemporaryDirectory() as root:
        spawn = mp.get_context("spawn")
        queue = spawn.Queue()
        writer = spawn.Process(target=_write_inputs, args=(size, seed, root, queue))
        writer.start()
        chunks = int(queue.get())
        writer.join()
        workers = max(1, min(2, os.cpu_count() or 1))
        # fork: each invocation starts with the code imported and no data, as a warm Lambda.
        pool = mp.get_context("fork").Pool(workers, maxtasksperchild=1)
        say(f"  split run of {size:,} contacts: {chunks} read chunks of {READ_CHUNK:,}, "
            f"{plan.parts} partitions of about {split.PARTITION_CONTACTS:,} contacts; each "
            f"invocation forks from a parent of {_peak_mb():.0f} MB, counted in its peak")
        say(f"    {'stage':<9} {'invocations':>11} {'largest CPU s':>13} {'largest MB':>10} "
            f"{'total CPU s':>11}")
        started = time.perf_counter()
        invocations = 0
        gb_s = 0.0
        messages = 0
        try:
            for stage in split.STAGES:
                single = stage in ("reduce", "baseline")
                count = chunks if stage == "read" else 1 if single else plan.parts
                results = _stage(pool, stage, root, plan, count, chunks)
                invocations += len(results)
                gb_s += sum(r["cpu_s"] for r in results) * STAGE_MB / 1024
                messages += sum(r["messages"] for r in results)
                say(f"    {stage:<9} {len(results):>11,} {max(r['cpu_s'] for r in results):>13.1f} "
                    f"{max(r['mb'] for r in results):>10.0f} {sum(r['cpu_s'] for r in results):>11.1f}")
        finally:
            pool.close()
            pool.join()
        objects = sum(1 for p in Path(root).rglob("*") if p.is_file())
        stored = sum(p.stat().st_size for p in Path(root).rglob("*") if p.is_file())
        gets = 3 * objects  # every shard is read by one stage, the group shards by three
        cost = (gb_s * LAMBDA_GB_S + invocations * LAMBDA_REQUEST + objects * S3_PUT
                + gets * S3_GET + (invocations + messages) * SQS_REQUEST)
        say(f"    {invocations:,} invocations, {objects:,} shard objects ({stored / 1e6:,.0f} MB), "
            f"{messages:,} block messages; {time.perf_counter() - started:.0f} s here on "
            f"{workers} processes; one run's cost about ${cost:.2f} (Lambda at {STAGE_MB} MB "
            "billed for its CPU seconds, S3 requests, SQS requests)")


def check(size: int, seed: int, cap: int, *, say: Callable[[str], None] = print) -> bool:
    """Whether the split run gives the single run's pairs and scores on ``size`` contacts."""
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
