"""From CRM contacts to block messages (dm-block) and from a block message to pairs (dm-score).

dm-block reads every contact once, counts how many contacts hold each value (the rarity that
weighs evidence), forms the capped blocks and packs them into SQS messages that each carry
everything dm-score needs: the profiles, their counts, their keys, the total and the capped
key values. dm-score then needs nothing but the message to score a block, so scoring is the
same whichever worker, in whatever order, receives it.

Message body (JSON, at most ``MAX_MESSAGE_BYTES`` of UTF-8)::

    {"v": 8, "run": "2026-W32", "total": 51234, "baseline": -21.3,
     "contexts": {"other": {"city": [exact, similar, pairs], ...}, ...},  # count_contexts
     "dependence": {"address>postcode": [agree, pairs], ..., "homes": [...],
                    "namesakes": [...]},                   # count_dependence
     "profiles": [[id, first, last, email, ...], ...],   # Profile.to_wire()
     "counts":   [[c_first, c_last, ...], ...],           # Rarity.at(contact)
     "keys":     [[email, phone, name, street, dob, ..., employer], ...],  # KEY_NAMES
     "capped":   [[key, value], ...],                     # oversized blocks these keys touch
     "blocks":   [{"k": key, "v": value, "m": [i, j, ...], "w": [n, of]}, ...]}
"""

from __future__ import annotations

import gc
import json
from array import array
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain, compress, pairwise
from operator import add, attrgetter, itemgetter
from typing import Any

from handlers.duplicate_merger.matcher import (
    FIELDS,
    KEY_NAMES,
    Bands,
    Block,
    BlockingReport,
    ContextCounts,
    DependenceCounts,
    Profile,
    ProfileBuilder,
    Rarity,
    ScoredPair,
    Scorer,
    Thresholds,
    baseline_bits,
    context_priors,
    count_contexts,
    count_dependence,
    count_sure_pairs,
    counts_from_wire,
    counts_to_wire,
    explained_by,
    form_blocks,
    keys_of,
    owner_key,
    sample_evidence,
)

DEFAULT_RECORD_FLOOR = -10.0
"""Pairs scoring below this (about a thousand to one against) are not recorded."""

MESSAGE_VERSION = 8
KEY_KINDS_OF_VERSION = {7: len(KEY_NAMES) - 1, MESSAGE_VERSION: len(KEY_NAMES)}
"""The block message formats dm-score reads, with the key kinds each row of ``keys`` holds.
Version 7 (release 0.1.0) is version 8 without the ``employer`` key, which 8 appended last to
``KEY_NAMES``: read as 8 with that key empty, a v7 message owns and scores the same pairs the
v7 code did (its blocks name no employer key), so one left on dm-blocks by an upgrade is
scored, not refused."""
MAX_MESSAGE_BYTES = 240_000
"""Below SQS's 256 KiB message limit, with room for the attributes SQS counts too."""


@dataclass
class BlockingRun:
    """Everything dm-block computed for one run."""

    run_id: str
    profiles: list[Profile]
    keys: list[tuple[str, ...]]
    rarity: Rarity
    blocks: list[Block]
    report: BlockingReport
    sure_pairs: int
    baseline: float
    contexts: ContextCounts
    """Field agreement per context, counted over this CRM (``contexts.count_contexts``)."""
    dependence: DependenceCounts
    """Place nesting and surnames at one home, counted over this CRM
    (``dependence.count_dependence``)."""


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while a run builds its million long-lived objects.

    Each object built counts towards the collector's next pass, and every full pass walks
    every object still alive, so at 1M contacts the collector cost dm-block about a fifth of
    its time, finding nothing: profiles, keys, counts, blocks and message rows hold no
    reference cycles (reference counting frees them). "Since the collector supplements the
    reference counting already used in Python, you can disable the collector if you are sure
    your program does not create reference cycles" (Python docs, "gc — Garbage Collector
    interface", https://docs.python.org/3/library/gc.html). Scoped: the collector is back on
    (if it was on) when the block ends, however it ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def profiles_from(
    contacts: Iterable[tuple[str, Any]], *, default_region: str = "US"
) -> list[Profile]:
    """Normalised profiles of ``(contact_id, properties)``, sorted by id (order-free input)."""
    builder = ProfileBuilder(default_region)
    with _collector_paused():
        profiles = [builder.build(cid, props) for cid, props in contacts]
    del builder  # its memos (the distinct texts) are not needed past the build
    profiles.sort(key=attrgetter("id"))
    for left, right in pairwise(profiles):
        if left.id == right.id:
            raise ValueError(f"contact {left.id} appears twice")
    return profiles


def run_blocking(run_id: str, profiles: list[Profile], *, cap: int) -> BlockingRun:
    """Keys, rarity and capped blocks for ``profiles`` (already sorted by id)."""
    with _collector_paused():
        keys = [keys_of(p) for p in profiles]
        rarity = Rarity(profiles)
        blocks, report = form_blocks(profiles, cap=cap, keys=keys)
        sure = count_sure_pairs(profiles, cap=cap)
        # Only contacts whose mobile or mailbox another contact holds can be in a pair
        # count_contexts counts: the same counts, from a fraction of the CRM.
        shared = map(max, rarity.column("mobile"), rarity.column("email"))
        contexts = count_contexts(list(compress(profiles, map((1).__lt__, shared))), cap=cap)
        dependence = count_dependence(profiles)
        evidence, every = sample_evidence(profiles, keys, rarity, blocks, report, contexts,
                                          dependence)
    bits = baseline_bits(rarity.total, sure, evidence, every)
    return BlockingRun(
        run_id, profiles, keys, rarity, blocks, report, sure, bits, contexts, dependence
    )


def encode_messages(
    run: BlockingRun, *, max_bytes: int = MAX_MESSAGE_BYTES
) -> Iterator[str]:
    """Pack the run's blocks into message bodies of at most ``max_bytes`` each, in block order.

    Blocks are never split across messages; a block that alone exceeds ``max_bytes`` is a
    configuration error (the cap is too high) and raises.
    """
    rows = _Rows(run)
    pending: list[Block] = []
    size = 0
    for block in run.blocks:
        estimate = rows.estimate(block)
        if pending and size + estimate > max_bytes:
            yield from _emit(pending, rows, max_bytes)
            pending, size = [], 0
        pending.append(block)
        size += estimate
    if pending:
        yield from _emit(pending, rows, max_bytes)


class _Rows:
    """What every message needs, computed once per run, not once per block or message: each
    contact's characters (for the size estimate) and the capped key values."""

    def __init__(self, run: BlockingRun) -> None:
        self.run = run
        # Characters of each contact's profile row and keys (C-level: a join's length is the
        # sum of its parts' lengths).
        self.chars = array(
            "L",
            map(
                add,
                map(len, map("".join, map(_WIRE, run.profiles))),
                map(len, map("".join, run.keys)),
            ),
        )
        # Per key kind, the values whose blocks were capped (a message lists those its
        # contacts hold).
        self.capped: list[set[str]] = [set() for _ in KEY_NAMES]
        for capped in run.report.capped:
            self.capped[KEY_NAMES.index(capped.key)].add(capped.value)

    def estimate(self, block: Block) -> int:
        """Bytes the block adds to a message, over-estimated: per row, its characters twice
        (JSON quoting per value) and 160 for the counts; an over-estimate (rows seldom repeat
        within a message) only makes messages a little smaller, and ``_emit`` splits any that
        is not."""
        members = block.members
        chars = int(sum(map(self.chars.__getitem__, members)))
        return 2 * chars + 160 * len(members) + 64


_WIRE = attrgetter("id", *FIELDS)
"""A profile's wire row (``Profile.to_wire``) as a tuple: JSON encodes a tuple as a list."""


def _emit(blocks: list[Block], rows: _Rows, max_bytes: int) -> Iterator[str]:
    body = _body(blocks, rows)
    if len(body.encode("utf-8")) <= max_bytes:
        yield body
        return
    if len(blocks) == 1:
        raise ValueError(
            f"block {blocks[0].key} of {len(blocks[0].members)} contacts exceeds the message "
            "size limit; lower the block cap"
        )
    half = len(blocks) // 2
    yield from _emit(blocks[:half], rows, max_bytes)
    yield from _emit(blocks[half:], rows, max_bytes)


def _body(blocks: list[Block], rows: _Rows) -> str:
    with _collector_paused():  # a message's rows are thousands of short-lived lists
        return _build_body(blocks, rows)


def _build_body(blocks: list[Block], rows: _Rows) -> str:
    run = rows.run
    # Contacts numbered in order of first appearance (a dict keeps insertion order).
    order = list(dict.fromkeys(chain.from_iterable(b.members for b in blocks)))
    local = dict(zip(order, range(len(order)), strict=True))
    keys = list(map(run.keys.__getitem__, order))
    touched = sorted(
        (key, value)
        for k, key in enumerate(KEY_NAMES)
        if rows.capped[k]
        for value in rows.capped[k].intersection(map(itemgetter(k), keys))
    )
    message = {
        "v": MESSAGE_VERSION,
        "run": run.run_id,
        "total": run.rarity.total,
        "baseline": round(run.baseline, 6),
        "contexts": counts_to_wire(run.contexts),
        "dependence": run.dependence.to_wire(),
        "profiles": list(map(_WIRE, map(run.profiles.__getitem__, order))),
        "counts": list(map(run.rarity.at, order)),
        "keys": keys,  # tuples encode as JSON arrays, as lists do
        "capped": [list(c) for c in touched],
        "blocks": [
            {
                "k": b.key,
                "v": b.value,
                "m": list(map(local.__getitem__, b.members)),
                **({"w": list(b.window)} if b.window else {}),
            }
            for b in blocks
        ],
    }
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


# Scoring side -----------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockMessage:
    """A validated block message."""

    run_id: str
    total: int
    baseline: float
    contexts: ContextCounts
    dependence: DependenceCounts
    profiles: tuple[Profile, ...]
    counts: tuple[tuple[int, ...], ...]
    keys: tuple[tuple[str, ...], ...]
    capped: frozenset[tuple[str, str]]
    blocks: tuple[tuple[str, tuple[int, ...]], ...]


class MessageError(ValueError):
    """A block message that is not of this version or shape; it is not retried."""


def decode_message(body: str) -> BlockMessage:
    """Parse and validate a block message body."""
    try:
        data = json.loads(body)
    except ValueError as err:
        raise MessageError("not JSON") from err
    version = data.get("v") if isinstance(data, dict) else None
    if type(version) is not int or version not in KEY_KINDS_OF_VERSION:
        readable = ", ".join(map(str, KEY_KINDS_OF_VERSION))
        raise MessageError(f"not a block message of a version read here ({readable})")
    kinds = KEY_KINDS_OF_VERSION[version]
    missing = ("",) * (len(KEY_NAMES) - kinds)  # key kinds added since: none in this message
    try:
        profiles = tuple(Profile.from_wire(row) for row in data["profiles"])
        counts = tuple(tuple(int(c) for c in row) for row in data["counts"])
        keys = tuple(tuple(str(k) for k in row) for row in data["keys"])
        capped = frozenset((str(k), str(v)) for k, v in data["capped"])
        blocks = tuple(
            (str(b["k"]), tuple(int(i) for i in b["m"])) for b in data["blocks"]
        )
        run_id, total = str(data["run"]), int(data["total"])
        bits = float(data["baseline"])
        contexts = counts_from_wire(data["contexts"])
        dependence = DependenceCounts.from_wire(data["dependence"])
    except (KeyError, TypeError, ValueError) as err:
        raise MessageError(f"malformed block message: {err}") from err
    n = len(profiles)
    if not -200.0 < bits < 0.0:
        raise MessageError("baseline out of range")
    if len(counts) != n or len(keys) != n or total < n:
        raise MessageError("profiles, counts and keys differ in length")
    if any(len(c) != len(FIELDS) for c in counts) or any(len(k) != kinds for k in keys):
        raise MessageError("a counts or keys row has the wrong length")
    keys = tuple(k + missing for k in keys)
    for key, members in blocks:
        if key not in KEY_NAMES[:kinds] or any(not 0 <= i < n for i in members):
            raise MessageError("a block names an unknown key or member")
    return BlockMessage(
        run_id, total, bits, contexts, dependence, profiles, counts, keys, capped, blocks
    )


@dataclass(frozen=True)
class CandidatePair:
    """A scored pair and the keys that brought its contacts together."""

    scored: ScoredPair
    blocked_by: tuple[str, ...]


@dataclass
class ScoredMessage:
    """What one block message yields: the pairs worth recording, and how many were not."""

    pairs: list[CandidatePair]
    compared: int
    below_floor: int


def score_message(
    message: BlockMessage, thresholds: Thresholds | Bands, *, floor: float = DEFAULT_RECORD_FLOOR
) -> ScoredMessage:
    """Every pair this message owns, scored once, in a stable order; pairs scoring below
    ``floor`` are counted, not kept (two different people who happen to share a block)."""
    scorer = Scorer(
        message.total,
        thresholds,
        message.baseline,
        context_priors(message.contexts),
        explained_by(message.dependence),
    )
    seen: set[tuple[int, int]] = set()
    out: list[CandidatePair] = []
    below = 0
    profiles, counts, keys = message.profiles, message.counts, message.keys
    ids = [p.id for p in profiles]
    values = [p.values() for p in profiles]
    for key, members in message.blocks:
        k = KEY_NAMES.index(key)
        for x, i in enumerate(members):
            for j in members[x + 1 :]:
                pair = (i, j) if i < j else (j, i)
                if pair in seen:
                    continue
                owner = owner_key(keys[i], keys[j], message.capped)
                if owner not in (k, -1):
                    continue  # another (uncapped) block of an earlier key scores it
                seen.add(pair)
                ev = scorer.evaluate(ids[i], values[i], counts[i], ids[j], values[j], counts[j])
                if ev.score < floor:
                    below += 1
                    continue
                out.append(CandidatePair(scorer.finish(ev), shared_keys(keys[i], keys[j])))
    return ScoredMessage(out, len(seen), below)


def shared_keys(a: Sequence[str], b: Sequence[str]) -> tuple[str, ...]:
    """The key kinds two contacts share (what the pairs table calls ``blocked_by``)."""
    return tuple(name for name, x, y in zip(KEY_NAMES, a, b, strict=True) if x and x == y)
