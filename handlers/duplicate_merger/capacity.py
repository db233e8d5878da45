"""What dm's weekly run does at a portal's size, said before it runs (``make plan``,
``make preflight``).

From the portal's size (``systems.dm.portalContacts``) and the settings: how many HubSpot calls
and hours a full read and a week's read of the changes take (``incremental.py``; a full re-read
every ``systems.dm.fullReadEveryWeeks``), how many dm-block invocations, and whether the run
fits. After a checkpointed read (``reading.py``) a portal up to ``systems.dm.splitAbove``
contacts is blocked whole (or, in a week, its whole stored index) in one dm-block invocation; a
larger one is read in full every week and runs split (``fanout.py``, dm-stage), each invocation
holding about ``systems.dm.partitionContacts`` contacts at any size. The figures rest on
measurements named beside each constant; docs/systems/dm.md's table is ``markdown_table``
(``make docs``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from handlers.common.hubspot import DEFAULT_TIER, TIERS
from handlers.duplicate_merger import crm, reading
from handlers.duplicate_merger.contract import FULL_READ_EVERY_WEEKS, SPLIT_ABOVE
from handlers.duplicate_merger.split import PARTITION_CONTACTS, STAGES

LIST_PAGE = 100
"""Contacts per page of HubSpot's contacts list (what dm-block reads, ``crm.py``)."""
PAGE_S = 0.25
"""Seconds per page, as ``make bench-dm-read``'s stand-in answers (HubSpot's own latency)."""
SEARCH_PAGE = crm.SEARCH_LIMIT
SEARCH_RESULTS = crm.SEARCH_RESULTS
SEARCH_PER_S = TIERS[DEFAULT_TIER].search_per_second
"""HubSpot's CRM search: 200 records a page, 10,000 results a query (a week's changes are read
in windows of ``lastmodifieddate``), and the shared client's pace, four requests a second, under
HubSpot's five per account ("Search the CRM", Limitations,
https://developers.hubspot.com/docs/api-reference/2026-03/crm/search-the-crm)."""
CHANGED_PER_WEEK = 0.05
"""Share of a portal created or changed in a week that the incremental-read figures assume."""
SUPPORTED = 1_000_000
"""The largest portal the deployed run was measured to block (dm's README: 1,392 MB, 128 s)."""
BLOCK_MB_PER_CONTACT = 1_392 / 1_000_000
BLOCK_MB = 3008
BLOCK_TIMEOUT_S = 300


@dataclass(frozen=True)
class Forecast:
    """The weekly run at ``contacts`` contacts."""

    contacts: int
    list_calls: int
    list_hours: float
    read_invocations: int
    block_s: float
    block_mb: float
    fits: bool
    """Whether the deployed run blocks this portal: read within ``MAX_STEPS`` invocations, and
    split, or blocked within dm-block's time and memory."""
    search_calls: int
    search_queries: int
    search_hours: float
    split: bool
    """Whether the run is split (the portal is above ``splitAbove``): then every week is a full
    read (the stored index of a week's read is for portals one invocation blocks)."""
    partition_contacts: int
    split_partitions: int
    split_invocations: int
    full_every: int
    """A full re-read every this many weeks (``systems.dm.fullReadEveryWeeks``; 1 when split)."""

    @property
    def average_calls(self) -> float:
        """HubSpot calls a week, over a cycle of one full read and the weeks of changes."""
        return (self.list_calls + (self.full_every - 1) * self.search_calls) / self.full_every

    @property
    def average_hours(self) -> float:
        return (self.list_hours + (self.full_every - 1) * self.search_hours) / self.full_every

    def lines(self) -> list[str]:
        n = f"{self.contacts:,}"
        verdict = (
            "does NOT fit: the weekly run fails at this size" if not self.fits
            else "fits" if self.split or self.contacts <= SUPPORTED
            else "fits, above the largest portal measured (1,000,000)"
        )
        blocking = (
            f"blocking split (above splitAbove): {self.split_partitions:,} partitions, "
            f"{self.split_invocations:,} dm-stage invocations of about "
            f"{self.partition_contacts:,} contacts each"
            if self.split
            else f"blocking in one invocation about {self.block_s:.0f} s and "
            f"{self.block_mb:,.0f} MB of {BLOCK_TIMEOUT_S} s and {BLOCK_MB} MB"
        )
        week = (
            "every week is a full read (a split portal has no stored index)"
            if self.split
            else f"a week's changes ({CHANGED_PER_WEEK:.0%} assumed) are {self.search_calls:,} "
            f"search calls in {self.search_queries:,} date window(s), "
            f"{self.search_hours * 3600:,.0f} s; with a full read every {self.full_every} "
            f"week(s), {self.average_calls:,.0f} calls and {self.average_hours:.2f} h a week on "
            "average"
        )
        return [
            f"dm at {n} contacts: full read {self.list_calls:,} HubSpot list calls, "
            f"{self.list_hours:.1f} h, {self.read_invocations} dm-block invocation(s); "
            f"{blocking}: {verdict}",
            f"dm at {n} contacts: {week}",
        ]


def forecast(
    contacts: int,
    full_every: int = FULL_READ_EVERY_WEEKS,
    *,
    split_above: int = SPLIT_ABOVE,
    partition_contacts: int = PARTITION_CONTACTS,
) -> Forecast:
    """The run at ``contacts``, split above ``split_above`` (``fanout.splits``' rule)."""
    split = contacts > split_above
    pages = math.ceil(contacts / LIST_PAGE)
    read_s = pages * PAGE_S
    per_invocation = BLOCK_TIMEOUT_S - reading.SAVE_RESERVE_S
    block_s = reading.block_reserve(contacts)
    after_read = reading.SPLIT_RESERVE_S if split else block_s
    read_invocations = max(1, math.ceil((read_s + after_read) / per_invocation))
    block_mb = BLOCK_MB_PER_CONTACT * contacts
    fits = read_invocations <= reading.MAX_STEPS and (
        split or (block_s <= per_invocation and block_mb <= BLOCK_MB)
    )
    changed = math.ceil(contacts * CHANGED_PER_WEEK)
    search_calls = math.ceil(changed / SEARCH_PAGE)
    parts = max(1, math.ceil(contacts / partition_contacts))
    chunks = max(1, math.ceil(contacts / 10_000))
    # read chunks, then every partitioned stage once per partition and the two single ones
    invocations = chunks + (len(STAGES) - 3) * parts + 2
    return Forecast(
        contacts,
        pages,
        read_s / 3600,
        read_invocations,
        block_s,
        block_mb,
        fits,
        search_calls,
        max(1, math.ceil(changed / SEARCH_RESULTS)),
        search_calls * max(PAGE_S, 1 / SEARCH_PER_S) / 3600,
        split,
        partition_contacts,
        parts,
        invocations,
        1 if split else full_every,
    )


TABLE_SIZES = (100_000, 1_000_000, 10_000_000)


def markdown_table(full_every: int = FULL_READ_EVERY_WEEKS, split_above: int = SPLIT_ABOVE) -> str:
    """docs/systems/dm.md's table of HubSpot calls and hours per run (``make docs``)."""
    rows = [
        f"| portal | full read: calls, hours | a week's changes: calls, windows, time "
        f"| a week on average (full every {full_every} below splitAbove): calls, hours |",
        "|---|---|---|---|",
    ]
    for size in TABLE_SIZES:
        f = forecast(size, full_every, split_above=split_above)
        week = (
            "none: above splitAbove every week is a full read"
            if f.split
            else f"{f.search_calls:,}, {f.search_queries:,}, {_duration(f.search_hours * 3600)}"
        )
        rows.append(
            f"| {size:,} | {f.list_calls:,}, {f.list_hours:.2f} h | {week} "
            f"| {f.average_calls:,.0f}, {f.average_hours:.2f} h |"
        )
    return "\n".join(rows)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


UNKNOWN = (
    "dm: the portal's size is not given: set systems.dm.portalContacts to see what the weekly "
    "run does at that size and whether it fits"
)


def plan_lines(
    contacts: int | None,
    full_every: int = FULL_READ_EVERY_WEEKS,
    *,
    split_above: int = SPLIT_ABOVE,
    partition_contacts: int = PARTITION_CONTACTS,
) -> list[str]:
    """What ``make plan`` prints for dm: the forecast, a warning first when it does not fit."""
    if contacts is None:
        return [UNKNOWN]
    found = forecast(contacts, full_every, split_above=split_above, partition_contacts=partition_contacts)
    lines = found.lines()
    return lines if found.fits else [f"warning: {lines[0]}", *lines[1:]]
