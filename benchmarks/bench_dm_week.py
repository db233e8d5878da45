"""A week's dm-block work against a full run's, on the same generated CRM.

Run with ``make bench-dm-week`` or ``.venv/bin/python benchmarks/bench_dm_week.py [--sizes
20000,100000] [--changed 0.05]``. For each size: a full run (normalise, count, key, block,
encode the messages, write the blocking index) on generated contacts
(testsupport/crm_generator.py), then a week in which ``--changed`` of them changed a surname
(the index read, the changes put in, only the blocks with a changed contact kept and encoded,
the index written again). Prints CPU seconds, messages and comparisons of each; the pairs table
is a dict (``testsupport.dm.MemoryTable``), so DynamoDB's own time is not in the figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from handlers.duplicate_merger.incremental import (
    IndexTable,
    IndexWriter,
    updated,
    week_blocking,
)
from handlers.duplicate_merger.pipeline import (
    encode_messages,
    profiles_from,
    run_blocking,
)
from testsupport.crm_generator import generate
from testsupport.dm import MemoryTable

CAP = 50
STARTED = dt.datetime(2026, 11, 30, 6, tzinfo=dt.UTC)


def measure(size: int, share: float) -> str:
    before = generate(size, seed=11).contacts
    rng = random.Random(43)
    changed = {
        cid: {**props, "lastname": (props.get("lastname") or "X") + "e"}
        for cid, props in rng.sample(before, int(size * share))
    }
    index = IndexTable(MemoryTable(), ttl=0)
    started = time.process_time()
    writer = IndexWriter(index, "full")
    full = run_blocking("full", profiles_from(writer.tee(before)), cap=CAP)
    full_messages = sum(1 for _ in encode_messages(full))
    state = writer.commit(full, STARTED, None, "full")
    full_s = time.process_time() - started
    started = time.process_time()
    writer = IndexWriter(index, "week")
    profiles = profiles_from(writer.tee(updated(index.contacts(state), changed)))
    week = week_blocking("week", profiles, set(changed), state, cap=CAP)
    week_messages = sum(1 for _ in encode_messages(week))
    week_s = time.process_time() - started
    return (
        f"{size:,} contacts, {len(changed):,} changed: full run {full_s:.1f} s CPU, "
        f"{full_messages:,} messages, {full.report.comparisons:,} comparisons; a week "
        f"{week_s:.1f} s CPU, {week_messages:,} messages, {week.report.comparisons:,} comparisons"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000")
    parser.add_argument("--changed", type=float, default=0.05)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        print(measure(size, args.changed), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
