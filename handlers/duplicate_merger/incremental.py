"""dm's incremental weeks: after a full read, a week reads only what changed since the last run.

**The week's read.** HubSpot's CRM search on ``lastmodifieddate`` at or after the last run's
start (less ``SAFETY_MARGIN``), oldest change first, 200 a page. One query answers at most
10,000 results ("Search the CRM", Limitations,
https://developers.hubspot.com/docs/api-reference/2026-03/crm/search-the-crm), so a read that
reaches that many starts a new query (a *window*) at the last change it saw; a contact seen
twice at the boundary is kept once, in its later version. ``WindowCursor`` packs the window's
start, the results it has answered and HubSpot's ``after`` into one cursor, so the checkpointed
read (``reading.read_step``) carries a week's read across invocations as it does a full one.
The shared client keeps to the search endpoints' requests per second and retries a 429.

**The stored index.** What a week compares a changed contact against without reading everyone
from HubSpot: every contact's matching properties as read (``index#<generation>#<n>`` items of
the pairs table, compressed; ``make forget`` opens them) and the last full run's CRM-wide
figures (``index#current``: the baseline, the context and dependence counts, the sure pairs,
and when the last run and the last full read started). Keys, blocks and value counts are
derived from the stored properties at each run, so a new matcher release never reads stale
keys. Each
run writes a new generation beside the old one and then points ``index#current`` at it; every
item carries the pairs' TTL, so old generations expire by themselves and an index not renewed
for ``PAIR_TTL_DAYS`` is gone (the next run is then a full read).

**The week's blocks.** The stored contacts with the changed ones put in (a new contact added,
a changed one's old values gone with its old record) are blocked as a full run would block
them; only the blocks holding a changed contact are sent, in the pipeline's message format, so
every pair with a changed contact is scored (pairs of two unchanged contacts in those blocks are
scored again, to the same result). The value counts are recounted over the updated index, so
they are exact but for deleted contacts (a deletion is only noticed by a full re-read); the
baseline, context and dependence counts are the last full read's: docs/systems/dm.md, "Large
portals", says how far that lets a week's scores drift and why the full re-read bounds it.
"""

from __future__ import annotations

import datetime as dt
import json
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from handlers.duplicate_merger.crm import (
    MODIFIED,
    SEARCH_LIMIT,
    SEARCH_RESULTS,
    ChangesReader,
    Contact,
    paged,
)
from handlers.duplicate_merger.matcher import (
    DependenceCounts,
    Profile,
    Rarity,
    counts_from_wire,
    counts_to_wire,
    form_blocks,
    keys_of,
)
from handlers.duplicate_merger.pipeline import BlockingRun
from handlers.duplicate_merger.reading import decode_chunk, split_chunks

SAFETY_MARGIN = dt.timedelta(hours=1)
"""A week reads changes from this long before the last run started: a change HubSpot had not
yet indexed for search when that run read ("it may take a few moments for newly created or
updated CRM objects to appear in search results", the search page above) is read again, not
missed. A contact read twice is the same contact."""
INDEX_CHUNK_CONTACTS = 5_000
"""Contacts gathered before the index writes them: on generated contacts ~220 KB compressed,
one item under DynamoDB's 400 KB (``split_chunks`` splits any larger)."""
INDEX_VERSION = 1
Read = Literal["full", "changes"]


class WindowStuck(Exception):
    """More contacts changed within one millisecond than one search answers: a week cannot read
    past them, and reads the whole portal instead (not a ``CrmError``: a retry cannot help)."""


def modified_ms(properties: dict[str, Any]) -> int:
    """``lastmodifieddate`` in epoch milliseconds (HubSpot answers ISO 8601; a filter takes ms)."""
    value = str(properties.get(MODIFIED) or "")
    if value.isdigit():
        return int(value)
    if not value:
        return 0
    parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return int(parsed.timestamp() * 1000)


def epoch_ms(at: dt.datetime) -> int:
    return int(at.timestamp() * 1000)


@dataclass
class WindowCursor:
    """Where a week's read stands: the window's start, the results its query has answered,
    HubSpot's ``after`` within it. Text (``<start>:<answered>:<after>``) in the read state."""

    start: int
    answered: int = 0
    after: str | None = None

    def text(self) -> str:
        return f"{self.start}:{self.answered}:{self.after or ''}"

    @classmethod
    def parse(cls, text: str) -> WindowCursor:
        start, answered, after = text.split(":", 2)
        return cls(int(start), int(answered), after or None)


class WindowedChanges:
    """A week's read as a ``CrmReader`` (pages behind one cursor): the changed contacts, in
    date windows of at most ``results`` each."""

    def __init__(
        self, crm: ChangesReader, since_ms: int, *, page: int = SEARCH_LIMIT, results: int = SEARCH_RESULTS
    ) -> None:
        self.crm, self.since_ms, self.page_size, self.results = crm, since_ms, page, results

    def page(self, after: str | None) -> tuple[list[Contact], str | None]:
        at = WindowCursor(self.since_ms) if after is None else WindowCursor.parse(after)
        contacts, following = self.crm.changed_page(at.start, at.after)
        if following is None:
            return contacts, None
        answered = at.answered + len(contacts)
        if answered + self.page_size <= self.results:
            return contacts, WindowCursor(at.start, answered, following).text()
        # The next page would pass the query's limit: a new query from the last change seen.
        last = max(map(modified_ms, (props for _, props in contacts)), default=at.start)
        if last <= at.start:
            raise WindowStuck(f"more than {self.results} contacts changed at {at.start} ms")
        return contacts, WindowCursor(last).text()

    def iter_contacts(self) -> Iterator[Contact]:
        return paged(self.page)


# The stored index ---------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexState:
    """``index#current``: the generation holding the contacts and the last full read's figures."""

    generation: str
    chunks: int
    contacts: int
    run_started: str
    """When the last run (full or a week) started, ISO 8601: the next week reads from it."""
    full_started: str
    """When the last full read started: a full re-read is due ``full_read_every_weeks`` on."""
    sure_pairs: int
    baseline: float
    contexts: dict[str, Any]
    dependence: dict[str, Any]

    def to_bytes(self) -> bytes:
        data = {"v": INDEX_VERSION, **self.__dict__}
        return zlib.compress(json.dumps(data, separators=(",", ":")).encode("utf-8"))

    @classmethod
    def from_bytes(cls, data: bytes) -> IndexState | None:
        """None for an index of another version (the next run reads everything)."""
        fields = json.loads(zlib.decompress(data))
        if fields.pop("v", None) != INDEX_VERSION:
            return None
        return cls(**fields)


def read_kind(state: IndexState | None, now: dt.datetime, every_weeks: int) -> Read:
    """Full when there is no index or a full re-read is due, else the week's changes."""
    if state is None:
        return "full"
    since_full = now - dt.datetime.fromisoformat(state.full_started)
    # A day's slack: a schedule that fires a little early still counts as a week.
    return "full" if since_full >= dt.timedelta(weeks=every_weeks, days=-1) else "changes"


def since_ms(state: IndexState) -> int:
    """Where a week's read starts: the last run's start, less the safety margin."""
    return epoch_ms(dt.datetime.fromisoformat(state.run_started) - SAFETY_MARGIN)


class IndexIncomplete(Exception):
    """A chunk of the stored index is gone (``make forget`` erased the chunk holding a person):
    the run reads the whole portal instead, which writes a whole index again."""


class IndexTable:
    """The index as items of the pairs table (``index#current``, ``index#<gen>#<n>``).

    A chunk holds its contacts compressed (``data``, as the read's checkpoints). ``make forget``
    opens it (dm's ``privacy.packed``), finds the person's contacts in it and erases the chunk;
    the next run then finds the index incomplete and reads in full."""

    CURRENT = "index#current"

    def __init__(self, table: Any, *, ttl: int) -> None:
        self.table, self.ttl = table, ttl

    def load(self) -> IndexState | None:
        item = self.table.get_item(Key={"pair_key": self.CURRENT}, ConsistentRead=True).get("Item")
        return None if item is None else IndexState.from_bytes(_binary(item["data"]))

    def contacts(self, state: IndexState) -> Iterator[Contact]:
        for n in range(state.chunks):
            key = f"index#{state.generation}#{n}"
            item = self.table.get_item(Key={"pair_key": key}, ConsistentRead=True).get("Item")
            if item is None:
                raise IndexIncomplete(f"{key} of {state.chunks} chunks is gone")
            yield from decode_chunk(_binary(item["data"]))

    def put_chunk(self, generation: str, n: int, data: bytes) -> None:
        self.table.put_item(Item={"pair_key": f"index#{generation}#{n}", "data": data, "ttl": self.ttl})

    def commit(self, state: IndexState) -> None:
        self.table.put_item(Item={"pair_key": self.CURRENT, "data": state.to_bytes(), "ttl": self.ttl})


def _binary(value: Any) -> bytes:
    return bytes(value.value if hasattr(value, "value") else value)


class IndexWriter:
    """Writes a run's contacts as a new generation while the run reads them (``tee``): the
    contacts stream through, a chunk at a time, never all held twice."""

    def __init__(self, store: IndexTable, generation: str) -> None:
        self.store, self.generation = store, generation
        self.chunks = 0
        self.contacts = 0
        self._pending: list[Contact] = []

    def tee(self, contacts: Iterable[Contact]) -> Iterator[Contact]:
        for contact in contacts:
            self._pending.append(contact)
            if len(self._pending) >= INDEX_CHUNK_CONTACTS:
                self._flush()
            yield contact
        self._flush()

    def _flush(self) -> None:
        for data in split_chunks(self._pending):
            self.store.put_chunk(self.generation, self.chunks, data)
            self.chunks += 1
        self.contacts += len(self._pending)
        self._pending = []

    def commit(
        self, run: BlockingRun, started: dt.datetime, previous: IndexState | None, kind: Read
    ) -> IndexState:
        """Point ``index#current`` at this generation; a full read also renews the figures."""
        if kind == "full" or previous is None:
            full_started = started.isoformat()
            sure, baseline = run.sure_pairs, run.baseline
            contexts, dependence = counts_to_wire(run.contexts), run.dependence.to_wire()
        else:
            full_started = previous.full_started
            sure, baseline = previous.sure_pairs, previous.baseline
            contexts, dependence = previous.contexts, previous.dependence
        state = IndexState(
            self.generation, self.chunks, self.contacts, started.isoformat(), full_started,
            sure, baseline, contexts, dependence,
        )
        self.store.commit(state)
        return state


# The week's blocks --------------------------------------------------------------------------


def updated(stored: Iterable[Contact], changed: dict[str, dict[str, Any]]) -> Iterator[Contact]:
    """The stored contacts with each changed one's new record in place of its old one, then
    the new contacts."""
    pending = dict(changed)
    for contact_id, properties in stored:
        found = pending.pop(contact_id, None)
        yield (contact_id, properties if found is None else found)
    yield from pending.items()


def week_blocking(
    run_id: str, profiles: list[Profile], changed: set[str], state: IndexState, *, cap: int
) -> BlockingRun:
    """The full run's blocks over the updated index, keeping those with a changed contact;
    exact value counts, the last full read's baseline, context and dependence counts."""
    keys = [keys_of(p) for p in profiles]
    rarity = Rarity(profiles)
    blocks, report = form_blocks(profiles, cap=cap, keys=keys)
    mine = {i for i, p in enumerate(profiles) if p.id in changed}
    kept = [b for b in blocks if not mine.isdisjoint(b.members)]
    report.blocks = len(kept)
    report.comparisons = sum(b.pair_count for b in kept)
    return BlockingRun(
        run_id,
        profiles,
        keys,
        rarity,
        kept,
        report,
        state.sure_pairs,
        state.baseline,
        counts_from_wire(state.contexts),
        DependenceCounts.from_wire(state.dependence),
    )
