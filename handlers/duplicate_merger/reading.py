"""Reading a portal too large for one dm-block invocation: a checkpointed read.

HubSpot's contacts list pages 100 at a time behind one ``after`` cursor, so the read is
sequential: at ~0.25 s a page, 100,000 contacts take ~250 s of dm-block's 300 s, and a larger
portal cannot be read in one invocation. dm-block therefore reads until its deadline nears,
saves what it read and the cursor in its state table (the pairs table: ``read#<run>`` holds the
cursor and the step, ``read#<run>#<n>`` the contacts read, zlib-compressed JSON, each item under
DynamoDB's 400 KB), and invokes itself asynchronously with the next step. The invocation that
reads the last page loads every chunk and blocks the whole portal at once, or, when too little
of its time is left for that, hands the blocking to one more invocation. Every item carries the
pairs' TTL, so an abandoned read cleans itself up.

A continuation names its step; the state advances only from that step (a conditional write),
so a duplicate or late continuation does nothing. A new weekly run starts from scratch.
Lambda's recursive loop detection tracks loops through SQS, SNS and S3, not a function invoking
itself ("Use Lambda recursive loop detection to prevent infinite loops",
https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html), so ``MAX_STEPS``
bounds the chain instead.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from botocore.exceptions import ClientError

from handlers.common.transitions import condition_failed
from handlers.duplicate_merger.crm import Contact, CrmError, CrmReader

MAX_STEPS = 60
"""At most this many invocations per weekly read (~6M contacts at 0.25 s a page): a bound on a
runaway chain, far above the largest portal dm blocks (its README)."""
MAX_CHUNK_BYTES = 350_000
"""Compressed contacts per item, under DynamoDB's 400 KB item limit with the key and TTL."""
SAVE_RESERVE_S = 30.0
"""Stop reading this long before the deadline: saving the chunk and the cursor fits in it."""
BLOCK_BASE_S = 20.0
BLOCK_S_PER_CONTACT = 215e-6
"""Per million contacts: ~30 s to load and decode the chunks (``make bench-dm-read``), ~134 s
to block (dm's README, scale), ~12 s to send the messages; +10 %, plus a base; and ~15 s to
write the blocking index (``incremental.py``: ~44,000 write units, 11 s at the 4,000 a second a new
on-demand table sustains, "DynamoDB on-demand capacity mode", Initial throughput,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html)."""


def block_reserve(contacts: int) -> float:
    """Time an invocation must have left to block ``contacts`` contacts itself."""
    return BLOCK_BASE_S + BLOCK_S_PER_CONTACT * contacts


SPLIT_RESERVE_S = 20.0
"""Time a split run's start needs after the read: save a small portal's read, queue a message
per chunk (``fanout.start``)."""
BLOCK_RESERVE_S = block_reserve(1_000_000)
"""The reserve for the largest portal dm blocks (1M contacts: 235 s)."""


def encode_chunk(contacts: list[Contact]) -> bytes:
    return zlib.compress(json.dumps(contacts, separators=(",", ":")).encode("utf-8"), 6)


def decode_chunk(data: bytes) -> list[Contact]:
    return [(str(cid), dict(props)) for cid, props in json.loads(zlib.decompress(data))]


def split_chunks(contacts: list[Contact], limit: int = MAX_CHUNK_BYTES) -> list[bytes]:
    """The contacts as compressed chunks, each at most ``limit`` bytes.

    One trial encoding sizes the split (every encoding of ~100k contacts costs seconds of the
    save reserve); a part that still comes out too large is split again."""
    if not contacts:
        return []
    data = encode_chunk(contacts)
    if len(data) <= limit or len(contacts) == 1:
        return [data]
    parts = min(len(contacts), -(-len(data) * 5 // (limit * 4)))  # aim at 80 % of the limit
    size = -(-len(contacts) // parts)
    out: list[bytes] = []
    for start in range(0, len(contacts), size):
        piece = contacts[start : start + size]
        encoded = encode_chunk(piece)
        out.extend([encoded] if len(encoded) <= limit else split_chunks(piece, limit))
    return out


@dataclass
class ReadState:
    """Where a run's read stands: the cursor, the step, the chunks saved, the contacts read."""

    run_id: str
    step: int = 0
    after: str | None = None
    chunks: int = 0
    contacts: int = 0
    done: bool = False

    def to_item(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "step": self.step,
            "after": self.after,
            "chunks": self.chunks,
            "contacts": self.contacts,
            "done": self.done,
        }

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> ReadState:
        return cls(
            str(item["run_id"]),
            int(item["step"]),
            None if item.get("after") in (None, "") else str(item["after"]),
            int(item.get("chunks") or 0),
            int(item.get("contacts") or 0),
            bool(item.get("done")),
        )


class Checkpoints(Protocol):
    """The state table's read rows (the pairs table in production)."""

    def load(self, run_id: str) -> ReadState | None: ...

    def save(self, state: ReadState, chunks: list[bytes], *, expected_step: int | None) -> bool:
        """Write the new chunks, then the state, if the stored step is ``expected_step``
        (None: no state yet, or a fresh start). False if another writer moved it."""
        ...

    def chunks(self, state: ReadState) -> Iterator[bytes]: ...


@dataclass(frozen=True)
class Outcome:
    """What one invocation did: ``block`` (``contacts`` yields the whole portal, once),
    ``continue`` (invoke the next ``step``) or ``stale`` (a duplicate continuation: nothing).

    A portal read across invocations is yielded chunk by chunk as dm-block normalises it, so
    its decoded contacts (about 0.9 GB at 1M contacts) are never all held at once beside the
    profiles, counts and blocks."""

    action: Literal["block", "continue", "stale"]
    state: ReadState
    contacts: Iterable[Contact] = ()
    pages: int = 0


def read_step(
    reader: CrmReader,
    checkpoints: Checkpoints,
    run_id: str,
    step: int,
    remaining: Callable[[], float],
    reserve: Callable[[int], float] = block_reserve,
) -> Outcome:
    """One invocation's share of the read. ``step`` 0 starts the run afresh; ``remaining`` is
    the invocation's time left in seconds; ``reserve`` the time the work after the read needs
    at that many contacts (a week's read blocks the whole stored index, not only what it read;
    a split run's start needs ``SPLIT_RESERVE_S`` only)."""
    if step == 0:
        state = ReadState(run_id)
        expected: int | None = None
    else:
        stored = checkpoints.load(run_id)
        if stored is None or stored.step != step:
            return Outcome("stale", stored or ReadState(run_id))
        state, expected = stored, step
    read: list[Contact] = []
    pages = 0
    while not state.done and remaining() > SAVE_RESERVE_S:
        try:
            contacts, following = reader.page(state.after)
        except CrmError:
            if not read:
                raise  # no progress: fail this invocation (Lambda retries it)
            break  # keep what was read; the next invocation retries this page
        read.extend(contacts)
        pages += 1
        state.after = following
        state.done = following is None
    state.contacts += len(read)
    if state.done and state.chunks == 0 and remaining() > reserve(state.contacts):
        return Outcome("block", state, read, pages)  # the portal fit in one invocation
    new_chunks = split_chunks(read)
    block_now = state.done and remaining() > reserve(state.contacts)
    state.chunks += len(new_chunks)
    state.step = step + 1  # claimed: a duplicate of this continuation finds it moved on
    if not checkpoints.save(state, new_chunks, expected_step=expected):
        return Outcome("stale", state)
    if block_now:
        del read, new_chunks  # the saved chunks hold them now
        everything = (c for chunk in checkpoints.chunks(state) for c in decode_chunk(chunk))
        return Outcome("block", state, everything, pages)
    return Outcome("continue", state, (), pages)


class DynamoCheckpoints:
    """Checkpoints as items of the pairs table: ``read#<run>`` and ``read#<run>#<n>``."""

    def __init__(self, table: Any, *, ttl: int) -> None:
        self.table = table
        self.ttl = ttl

    @staticmethod
    def _key(run_id: str, n: int | None = None) -> str:
        return f"read#{run_id}" if n is None else f"read#{run_id}#{n}"

    def load(self, run_id: str) -> ReadState | None:
        item = self.table.get_item(Key={"pair_key": self._key(run_id)}, ConsistentRead=True).get("Item")
        return None if item is None else ReadState.from_item(dict(item))

    def save(self, state: ReadState, chunks: list[bytes], *, expected_step: int | None) -> bool:
        first = state.chunks - len(chunks)
        for offset, chunk in enumerate(chunks):
            self.table.put_item(
                Item={"pair_key": self._key(state.run_id, first + offset), "data": chunk, "ttl": self.ttl}
            )
        item = {"pair_key": self._key(state.run_id), **state.to_item(), "ttl": self.ttl}
        condition: dict[str, Any] = {}
        if expected_step is not None:
            condition = {
                "ConditionExpression": "step = :expected",
                "ExpressionAttributeValues": {":expected": expected_step},
            }
        try:
            self.table.put_item(Item=item, **condition)
        except ClientError as err:
            if condition_failed(err):
                return False
            raise
        return True

    def chunks(self, state: ReadState) -> Iterator[bytes]:
        for n in range(state.chunks):
            yield self.chunk(state.run_id, n)

    def chunk(self, run_id: str, n: int) -> bytes:
        """One saved chunk (the split run's read stage reads one a message)."""
        item = self.table.get_item(Key={"pair_key": self._key(run_id, n)}, ConsistentRead=True)
        return bytes(item["Item"]["data"].value if hasattr(item["Item"]["data"], "value") else item["Item"]["data"])
