"""dm-block's weekly run split into partitions, so no invocation grows with the CRM.

The single run (``pipeline.run_blocking``) holds the whole CRM in one invocation. The split
run produces the same block messages' pairs and scores from stages that each hold one
partition (about ``SplitPlan.partition_contacts`` contacts' worth), a shuffle through the
shards store (``shards.py``):

1. ``read`` (one per read chunk): contacts -> profiles and keys, each contact to its id's
   partition, and each value it holds (``matcher.partial_counts.counted_values``) to the value's.
2. ``count`` (per value partition): how many contacts hold each value, sent back to each
   holder's id partition.
   The comparisons of the blocks follow from their sizes.
3. ``join`` (per id partition): each contact with the size of every group it is in, sent to
   the partition of every group it is counted in (``stats``) or blocked in (``blocks``).
4. ``tally`` (per stats partition): the sure pairs, context and dependence counts of the
   groups routed there (``matcher.partial_counts.tally``).
5. ``reduce`` (one): the run's counts, the sum of the tallies.
6. ``evidence`` (per blocks partition): the sampled blocks' evidence (``matcher.baseline``).
7. ``baseline`` (one): the run's baseline from all the evidence.
8. ``emit`` (per blocks partition): the partition's blocks as block messages
   (``pipeline``'s format, unchanged) to dm-blocks.

A block is one key value's group, routed whole to one partition, so a block never spans
partitions; a contact is copied to each partition one of its groups is in. Each stage checks
that every writer of the stage before it wrote its object (``MissingShard``): a lost
partition stops the run instead of changing its result.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from handlers.duplicate_merger import shards as store
from handlers.duplicate_merger.matcher import (
    K0,
    KEY_NAMES,
    S0,
    SAMPLE_PAIRS,
    Block,
    BlockingReport,
    CappedBlock,
    Member,
    Profile,
    ProfileBuilder,
    Rarity,
    Scorer,
    Segments,
    Tally,
    Thresholds,
    baseline_bits,
    block_comparisons,
    context_priors,
    counted_values,
    explained_by,
    form_blocks,
    group_name,
    grouped,
    keys_of,
    name_order,
    owner_key,
    sampled,
    segmented,
    segments,
    tally,
    window_count,
)
from handlers.duplicate_merger.pipeline import BlockingRun, encode_messages
from handlers.duplicate_merger.shards import Shards, partition_of

Contact = tuple[str, Any]

STAGES = ("read", "count", "join", "tally", "reduce", "evidence", "baseline", "emit")
PARTITION_CONTACTS = 5_000
"""Contacts per partition, about: the ``count`` stage holds some 30 values of each, which at
5,000 contacts keeps every stage's invocation near 100 MB (``make bench-dm``, split scale)."""

_ANY = Thresholds(automatic=math.inf, propose=math.inf)


class MissingShard(RuntimeError):
    """A stage's input lacks a writer's object: a lost partition, never a smaller result."""


@dataclass(frozen=True)
class SplitPlan:
    """One split run: its id, how many partitions, the block cap and the phone region."""

    run_id: str
    parts: int
    cap: int
    region: str = "US"
    cut: Segments = field(default_factory=Segments)

    @classmethod
    def for_contacts(cls, run_id: str, contacts: int, *, cap: int, region: str = "US",
                     partition_contacts: int = PARTITION_CONTACTS,
                     cut: Segments | None = None) -> SplitPlan:
        parts = max(1, -(-contacts // partition_contacts))
        return cls(run_id, parts, cap, region, cut or Segments())

    def key(self, stage: str, part: int, writer: int | None = None) -> str:
        base = f"{self.run_id}/{stage}/{part:05d}/"
        return base if writer is None else f"{base}{writer:06d}"


def _inputs(shards: Shards, plan: SplitPlan, stage: str, part: int, writers: int) -> Iterator[Any]:
    keys = shards.keys(plan.key(stage, part))
    if len(keys) != writers:
        raise MissingShard(
            f"{stage} partition {part}: {len(keys)} of {writers} writers' objects found"
        )
    for key in keys:
        yield store.get(shards, key)


def _scatter(shards: Shards, plan: SplitPlan, stage: str, writer: int,
             out: dict[int, list[Any]]) -> None:
    """One object per target partition, empty ones too, so readers can count their writers."""
    for part in range(plan.parts):
        store.put(shards, plan.key(stage, part, writer), out.get(part, []))


# 1. read ----------------------------------------------------------------------------------


def read_stage(shards: Shards, plan: SplitPlan, chunk: int, contacts: Iterable[Contact]) -> int:
    """Normalise and key one read chunk; returns its contact count."""
    builder = ProfileBuilder(plan.region)
    rows: dict[int, list[Any]] = defaultdict(list)
    values: dict[int, list[Any]] = defaultdict(list)
    n = mobiles = 0
    for cid, props in contacts:
        p = builder.build(cid, props)
        keys = keys_of(p)
        rows[partition_of(p.id, plan.parts)].append([*p.to_wire(), *keys])
        order = list(name_order(p))  # where a capped block's windows put it
        for slot, (kind, value) in enumerate(counted_values(p, keys)):
            record = [kind, value, p.id, slot, order] if K0 <= kind < S0 else [kind, value, p.id, slot]
            values[partition_of(group_name(kind, value), plan.parts)].append(record)
        n += 1
        mobiles += bool(p.mobile)
    _scatter(shards, plan, "contacts", chunk, rows)
    _scatter(shards, plan, "values", chunk, values)
    store.put(shards, plan.key("read", 0, chunk), {"contacts": n, "mobiles": mobiles})
    return n


# 2. count ---------------------------------------------------------------------------------


def count_stage(shards: Shards, plan: SplitPlan, part: int, chunks: int) -> None:
    """Each value's holders, counted, and sent back to each holder; a group too large for one
    partition (``matcher.partial_counts.segmented``) is cut into segments here, where all its holders
    are seen. The records are read twice rather than held: a value partition's are the
    largest set any stage sees, and a common value (a state, a big city) brings all its
    holders to one partition. What is held is lean: one string per distinct value, and the
    answers flat, ``cid, slot, count`` after one another (``join`` reads them so)."""
    held: Counter[tuple[int, str]] = Counter()
    for obj in _inputs(shards, plan, "values", part, chunks):
        held.update((r[0], r[1]) for r in obj)
    texts = {value: value for _, value in held}
    out: dict[int, list[Any]] = defaultdict(list)
    large: dict[tuple[int, str], list[Any]] = defaultdict(list)
    for obj in _inputs(shards, plan, "values", part, chunks):
        for r in obj:
            n = held[r[0], r[1]]
            if segmented(r[0], n, plan.cap, plan.cut):
                r[1] = texts[r[1]]
                large[r[0], r[1]].append(r)
            else:
                out[partition_of(r[2], plan.parts)].extend((r[2], r[3], n))
    del texts
    for (kind, _), records in large.items():
        shared: dict[tuple[int, ...], list[Any]] = {}  # a place's holders share their answer
        for (cid, slot), segs, windows in segments(kind, records, plan.cap, plan.cut):
            answer = [len(records), segs, windows]
            if not windows:
                answer = shared.setdefault(tuple(segs), answer)
            out[partition_of(cid, plan.parts)].extend((cid, slot, answer))
        records.clear()
    _scatter(shards, plan, "counted", part, out)
    comparisons = sum(
        block_comparisons(n, plan.cap) for (kind, _), n in held.items() if K0 <= kind < S0
    )
    store.put(shards, plan.key("comparisons", 0, part), comparisons)


# 3. join ----------------------------------------------------------------------------------


def join_stage(shards: Shards, plan: SplitPlan, part: int, chunks: int) -> None:
    counts: dict[str, dict[int, Any]] = defaultdict(dict)
    for obj in _inputs(shards, plan, "counted", part, plan.parts):
        for at in range(0, len(obj), 3):  # flat: cid, slot, count
            cid, slot, count = obj[at : at + 3]
            counts[cid][slot] = count  # a count, or [count, segments, windows]
    stats: dict[int, list[Any]] = defaultdict(list)
    blocks: dict[int, list[Any]] = defaultdict(list)
    seen: set[str] = set()
    width = len(KEY_NAMES)
    for obj in _inputs(shards, plan, "contacts", part, chunks):
        for row in obj:
            wire, keys = row[:-width], tuple(row[-width:])
            cid = wire[0]
            if cid in seen:
                raise ValueError(f"contact {cid} appears twice")
            seen.add(cid)
            values = counted_values(Profile.from_wire(wire), keys)
            mine = counts.pop(cid, {})
            if len(mine) != len(values):
                raise MissingShard(f"contact {cid}: {len(mine)} of {len(values)} values counted")
            slots = [mine[s] for s in range(len(values))]
            row = [*wire, *keys, slots]
            for target in _targets(plan, values, slots, blocks=False):
                stats[target].append(row)
            for target in _targets(plan, values, slots, blocks=True):
                blocks[target].append(row)
    _scatter(shards, plan, "stats", part, stats)
    _scatter(shards, plan, "blocks", part, blocks)


def _targets(plan: SplitPlan, values: list[tuple[int, str]], counts: list[Any], *,
             blocks: bool) -> set[int]:
    """The partitions of the contact's counted groups (``blocks``: of its blocks), a
    segmented group's by segment."""
    out: set[int] = set()
    for (kind, value), count in zip(values, counts, strict=True):
        if (K0 <= kind < S0) != blocks:
            continue
        if isinstance(count, list):
            out.update(partition_of(group_name(kind, value, seg), plan.parts) for seg in count[1])
        elif grouped(kind, count, plan.cap):
            out.add(partition_of(group_name(kind, value), plan.parts))
    return out


# 4.-8. per group partition ----------------------------------------------------------------


def _members(shards: Shards, plan: SplitPlan, stage: str, part: int) -> tuple[
        list[Member], dict[tuple[int, str, int, int], list[Member]]]:
    """A ``stats`` or ``blocks`` partition's contacts (id order) and the groups of its kind
    routed to it, members in id order. Each contact keeps only its groups routed here (a
    contact's other slots are most of its row, and a partition holds thousands)."""
    blocks = stage == "blocks"
    read: list[tuple[Member, list[tuple[int, str, int, int]]]] = []
    # One string object per distinct text: a partition's contacts share their cities,
    # names, streets and keys, which JSON decodes afresh in every row.
    texts: dict[str, str] = {}
    for obj in _inputs(shards, plan, stage, part, plan.parts):
        for row in obj:
            row[1:-1] = [texts.setdefault(v, v) for v in row[1:-1]]
            member, slots = Member.from_row(row, plan.cap)
            here = [
                (kind, value, seg, count)
                for kind, value, count, segs in slots
                if (K0 <= kind < S0) == blocks and grouped(kind, count, plan.cap)
                for seg in segs or (-1,)
                if partition_of(group_name(kind, value, seg), plan.parts) == part
            ]
            read.append((member, here))
    del texts
    read.sort(key=lambda entry: entry[0].profile.id)
    groups: dict[tuple[int, str, int, int], list[Member]] = defaultdict(list)
    for member, here in read:
        for group in here:
            groups[group].append(member)
    return [m for m, _ in read], groups


@dataclass
class _Blocks:
    """A block partition: its contacts, blocks, and every capped key value they hold (their
    blocks may be in other partitions)."""

    members: list[Member]
    blocks: list[Block]
    report: BlockingReport
    capped: set[tuple[str, str]]


def _blocks(shards: Shards, plan: SplitPlan, part: int) -> _Blocks:
    members, groups = _members(shards, plan, "blocks", part)
    index = {id(m): i for i, m in enumerate(members)}
    masked = [[""] * len(KEY_NAMES) for _ in members]
    windowed: list[Block] = []
    for (kind, value, seg, _), held in groups.items():
        k = kind - K0
        if seg < 0:
            for m in held:
                masked[index[id(m)]][k] = value
            continue
        # A capped block's windows, as the count stage cut them in name order.
        windows: dict[int, list[int]] = defaultdict(list)
        for m in held:
            for w in m.windows[k]:
                if plan.cut.of_window(w) == seg:
                    windows[w].append(index[id(m)])
        of = window_count(held[0].counts[k], plan.cap)
        windowed.extend(
            Block(KEY_NAMES[k], value, tuple(sorted(ms)), (w, of)) for w, ms in windows.items()
        )
    # Only this partition's uncapped key groups are left in ``masked``: form_blocks forms them.
    blocks, report = form_blocks(
        [m.profile for m in members], cap=plan.cap, keys=[tuple(k) for k in masked]
    )
    blocks.extend(windowed)
    capped = {(KEY_NAMES[k], m.keys[k]) for m in members for k in m.capped}
    return _Blocks(members, blocks, report, capped)


def tally_stage(shards: Shards, plan: SplitPlan, part: int) -> None:
    _, groups = _members(shards, plan, "stats", part)
    counted = tally(((k, v, n, ms) for (k, v, _, n), ms in groups.items()), plan.cap)
    store.put(shards, plan.key("tally", 0, part), counted.to_wire())


@dataclass(frozen=True)
class RunCounts:
    """The run's counts: what ``reduce`` adds up, and what every later stage reads."""

    total: int
    mobiles: int
    tally: Tally

    @property
    def every(self) -> int:
        """One block in how many the evidence samples (``matcher.baseline.sample_evidence``)."""
        return max(1, math.ceil(self.tally.comparisons / SAMPLE_PAIRS))

    def to_wire(self) -> dict[str, Any]:
        return {"total": self.total, "mobiles": self.mobiles, "tally": self.tally.to_wire()}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> RunCounts:
        return cls(int(data["total"]), int(data["mobiles"]), Tally.from_wire(data["tally"]))


def reduce_stage(shards: Shards, plan: SplitPlan, chunks: int) -> RunCounts:
    total = mobiles = 0
    for obj in _inputs(shards, plan, "read", 0, chunks):
        total += int(obj["contacts"])
        mobiles += int(obj["mobiles"])
    summed = Tally()
    for obj in _inputs(shards, plan, "tally", 0, plan.parts):
        summed.add(Tally.from_wire(obj))
    summed.comparisons = sum(_inputs(shards, plan, "comparisons", 0, plan.parts))
    counts = RunCounts(total, mobiles, summed)
    store.put(shards, f"{plan.run_id}/counts", counts.to_wire())
    return counts


def _counts(shards: Shards, plan: SplitPlan) -> RunCounts:
    return RunCounts.from_wire(store.get(shards, f"{plan.run_id}/counts"))


def evidence_stage(shards: Shards, plan: SplitPlan, part: int) -> None:
    """The evidence of the sampled blocks' pairs, each in the block that owns it; a pair in
    capped blocks only (no owner) is kept by its ids, as it may be met in other partitions
    too and the single run scores it once."""
    counts = _counts(shards, plan)
    p = _blocks(shards, plan, part)
    dependence = counts.tally.dependence(counts.total, counts.mobiles)
    scorer = Scorer(max(counts.total, 2), _ANY, 0.0,
                    context_priors(counts.tally.context_counts()), explained_by(dependence))
    owned: list[float] = []
    unowned: dict[str, float] = {}
    for block in p.blocks:
        if not sampled(block, counts.every):
            continue
        k = KEY_NAMES.index(block.key)
        rows = [p.members[i] for i in block.members]
        for x, a in enumerate(rows):
            for b in rows[x + 1 :]:
                owner = owner_key(a.keys, b.keys, p.capped)
                if owner not in (k, -1):
                    continue
                score = scorer.evaluate(a.profile.id, a.values, a.rarity,
                                        b.profile.id, b.values, b.rarity).score
                if owner == k:
                    owned.append(score)
                else:
                    unowned[f"{a.profile.id}\0{b.profile.id}"] = score
    store.put(shards, plan.key("evidence", 0, part), {"owned": owned, "unowned": unowned})


def baseline_stage(shards: Shards, plan: SplitPlan) -> float:
    counts = _counts(shards, plan)
    evidence: list[float] = []
    unowned: dict[str, float] = {}
    for obj in _inputs(shards, plan, "evidence", 0, plan.parts):
        evidence.extend(obj["owned"])
        unowned.update(obj["unowned"])
    evidence.extend(unowned.values())
    bits = baseline_bits(counts.total, counts.tally.sure, evidence, counts.every)
    store.put(shards, f"{plan.run_id}/baseline", bits)
    return bits


class _Rarity:
    """The run's counts of each partition contact's values (what ``Rarity.at`` gives)."""

    def __init__(self, total: int, members: Sequence[Member]) -> None:
        self.total = total
        self.members = members

    def at(self, index: int) -> list[int]:
        return self.members[index].rarity


def emit_stage(shards: Shards, plan: SplitPlan, part: int,
               send: Callable[[Iterable[str]], int]) -> int:
    """The partition's blocks as block messages; returns how many were sent."""
    counts = _counts(shards, plan)
    bits = float(store.get(shards, f"{plan.run_id}/baseline"))
    p = _blocks(shards, plan, part)
    report = replace(
        p.report, capped=[CappedBlock(k, v, 0, 0) for k, v in sorted(p.capped)]
    )  # encode_messages lists the capped values each message's contacts hold
    run = BlockingRun(
        plan.run_id,
        [m.profile for m in p.members],
        [m.keys for m in p.members],
        cast(Rarity, _Rarity(counts.total, p.members)),
        p.blocks,
        report,
        counts.tally.sure,
        bits,
        counts.tally.context_counts(),
        counts.tally.dependence(counts.total, counts.mobiles),
    )
    return send(encode_messages(run))


# The whole run in one process (tests, the sandbox, the benchmark) -------------------------


@dataclass(frozen=True)
class SplitSummary:
    contacts: int
    chunks: int
    parts: int
    messages: int
    baseline: float
    counts: RunCounts


def run_split(
    chunks: Iterable[Iterable[Contact]],
    shards: Shards,
    plan: SplitPlan,
    send: Callable[[Iterable[str]], int],
    *,
    between: Callable[[str], None] = lambda stage: None,
) -> SplitSummary:
    """Every stage in order, each partition's invocation one after the other; ``between`` is
    called after each stage (a test drops a shard there)."""
    n = 0
    for n, contacts in enumerate(chunks, start=1):
        read_stage(shards, plan, n - 1, contacts)
    between("read")
    for part in range(plan.parts):
        count_stage(shards, plan, part, n)
    between("count")
    for part in range(plan.parts):
        join_stage(shards, plan, part, n)
    between("join")
    for part in range(plan.parts):
        tally_stage(shards, plan, part)
    between("tally")
    counts = reduce_stage(shards, plan, n)
    for part in range(plan.parts):
        evidence_stage(shards, plan, part)
    between("evidence")
    bits = baseline_stage(shards, plan)
    messages = sum(emit_stage(shards, plan, part, send) for part in range(plan.parts))
    return SplitSummary(counts.total, n, plan.parts, messages, bits, counts)
