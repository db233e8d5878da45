"""dm-block's split run: the single run's counts, baseline, pairs and scores, exactly, and a
lost partition stops the run. 3,000 generated contacts here (a few seconds); ``make bench-dm``
checks the same at 20,000 (``bench_dm.py --split-check``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain

import pytest

from handlers.duplicate_merger.matcher import Segments, Thresholds
from handlers.duplicate_merger.pipeline import (
    BlockingRun,
    decode_message,
    encode_messages,
    profiles_from,
    run_blocking,
    score_message,
)
from handlers.duplicate_merger.shards import MemoryShards
from handlers.duplicate_merger.split import MissingShard, SplitPlan, SplitSummary, run_split
from testsupport.crm_generator import generate

CAP = 50
CUT = Segments(contacts=150, windows=3)
"""Cut small, so that here too a city's consecutive pairs and a capped block's windows are
counted segment by segment, in several partitions."""
BANDS = Thresholds(automatic=12.0, propose=0.0)


def scored(bodies: Iterable[str]) -> dict[str, tuple[float, tuple[str, ...]]]:
    """Each pair's score and blocking keys, by pair key, over every message."""
    out: dict[str, tuple[float, tuple[str, ...]]] = {}
    for body in bodies:
        for pair in score_message(decode_message(body), BANDS).pairs:
            out[pair.scored.pair_key] = (pair.scored.score, pair.blocked_by)
    return out


@dataclass
class Runs:
    single: BlockingRun
    single_pairs: dict[str, tuple[float, tuple[str, ...]]]
    split: SplitSummary
    split_messages: list[list[str]]
    """Per partition, the block messages its ``emit`` sent."""


def split_run(
    contacts: list[tuple[str, dict[str, object]]],
    *,
    parts_of: int,
    shards: MemoryShards | None = None,
    between: Callable[[str], None] = lambda stage: None,
) -> tuple[SplitSummary, list[list[str]]]:
    """The split run, and the block messages each partition sent."""
    messages: list[list[str]] = []

    def send(bodies: Iterable[str]) -> int:
        messages.append(list(bodies))
        return len(messages[-1])

    plan = SplitPlan.for_contacts(
        "2026-W50", len(contacts), cap=CAP, partition_contacts=parts_of, cut=CUT
    )
    chunks = [contacts[i : i + 700] for i in range(0, len(contacts), 700)]
    summary = run_split(chunks, shards or MemoryShards(), plan, send, between=between)
    return summary, messages


@pytest.fixture(scope="module")
def runs() -> Runs:
    contacts = generate(3000, seed=11).contacts
    single = run_blocking("2026-W50", profiles_from(contacts), cap=CAP)
    summary, messages = split_run(contacts, parts_of=500)
    return Runs(single, scored(encode_messages(single)), summary, messages)


def test_the_data_holds_groups_the_split_run_cuts_into_segments(runs: Runs) -> None:
    cities = Counter(p.city for p in runs.single.profiles if p.city)
    assert max(cities.values()) > 2 * CUT.contacts
    assert max(c.windows for c in runs.single.report.capped) > 2 * CUT.windows


def test_the_split_run_counts_what_the_single_run_counts(runs: Runs) -> None:
    counts = runs.split.counts
    assert runs.split.parts == 6 and runs.split.chunks == 5
    assert counts.total == runs.single.rarity.total == 3000
    assert counts.tally.sure == runs.single.sure_pairs > 0
    assert counts.tally.comparisons == runs.single.report.comparisons
    assert counts.tally.context_counts() == runs.single.contexts
    assert counts.tally.dependence(counts.total, counts.mobiles) == runs.single.dependence
    assert runs.split.baseline == runs.single.baseline


def test_the_split_run_gives_exactly_the_single_runs_pairs_and_scores(runs: Runs) -> None:
    assert len(runs.single_pairs) > 300
    assert len(runs.split_messages) == runs.split.parts
    assert scored(chain.from_iterable(runs.split_messages)) == runs.single_pairs


@pytest.mark.parametrize("lost", [0, 3])
def test_the_comparison_sees_a_partitions_messages_lost(runs: Runs, lost: int) -> None:
    """The check above is not vacuous: without one partition's messages it fails."""
    left = chain.from_iterable(m for p, m in enumerate(runs.split_messages) if p != lost)
    assert len(scored(left).keys() - runs.single_pairs.keys()) == 0
    assert len(scored(left)) < len(runs.single_pairs)


@pytest.mark.parametrize(
    ("stage", "written"),
    [("read", "values"), ("count", "counted"), ("join", "stats"), ("join", "blocks"), ("tally", "tally"),
     ("evidence", "evidence")],
)
def test_a_lost_partition_stops_the_run(stage: str, written: str) -> None:
    shards = MemoryShards()

    def lose_one(done: str) -> None:
        if done == stage:
            shards.delete(next(k for k in shards.keys("") if f"/{written}/" in k))

    with pytest.raises(MissingShard, match="writers' objects found"):
        split_run(generate(400, seed=3).contacts, parts_of=100, shards=shards, between=lose_one)
