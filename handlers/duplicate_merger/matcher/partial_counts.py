"""What the split run counts per group (partial counts), so that the sums over its partitions are the single run's.

dm-block's single run counts over the whole CRM (``pipeline.run_blocking``): how many contacts
hold each value (``Rarity``), the blocks, the sure pairs, the agreement per context and the
dependence counts. Every one of them is a sum over *groups of contacts sharing one value*
(a field value, a key value, a sure rule's value, a home, a place), so the split run routes
each group whole to one partition and adds the partitions' sums. Three things need facts
about a contact's *other* groups, which the split run carries on each contact (the size of
every group it is in, counted in the ``count`` stage):

* a pair meeting several sure rules is one sure pair: it is counted in its first rule's
  group that is within the cap;
* a pair of namesakes at two shared homes is counted once: at the smallest home value they
  share that is a home (``SHARED_HOLDERS``);
* a home is one when fewer than ``SHARED_HOLDERS`` contacts hold it, counted over the CRM.

The rules are the matcher's (``matcher/counted.py``), read from its modules rather than
restated; the split run's equivalence test (split run == single run, pairs and scores) holds
the two together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from handlers.duplicate_merger.matcher.blocking import KEY_NAMES, WINDOW, _sort_key
from handlers.duplicate_merger.matcher.counted import (
    RULE_FIELD,
    RULES,
    SURE_RULES,
    ContextCounts,
    DependenceCounts,
    _address,
    _home_values,
    _one_employer,
    _one_mailbox,
    counts_from_wire,
)
from handlers.duplicate_merger.matcher.levels import different_people, field_levels, pair_context
from handlers.duplicate_merger.matcher.profile import FIELDS, Profile
from handlers.duplicate_merger.matcher.weights import (
    CONTEXT_PRIORS,
    PLACE_IMPLICATIONS,
    SHARED_HOLDERS,
)

# Kinds of value counted, numbered: each field (Rarity), each key kind (block sizes), each sure
# rule, the contexts' mailbox rule, a home (an address or a landline) and a street address.
F0 = 0
K0 = F0 + len(FIELDS)
S0 = K0 + len(KEY_NAMES)
C_EMAIL = S0 + len(SURE_RULES)
HOME = C_EMAIL + 1
P_ADDRESS = HOME + 1
KINDS = P_ADDRESS + 1
F_HOUSE, F_PHONE, F_MOBILE, F_POSTCODE, F_CITY = map(
    FIELDS.index, ("house", "phone", "mobile", "postcode", "city")
)
S_MOBILE = S0 + SURE_RULES.index(RULES["mobile"])
"""One full name and one mobile: a sure rule, the contexts' mobile rule, the namesakes'."""

_RULE_FIELDS = {
    rule: {
        context: {n: FIELDS.index(n) for n in fields if RULE_FIELD.get(n, "mobile") == rule}
        for context, fields in CONTEXT_PRIORS.items()
    }
    for rule in RULES
}
_COARSER = {
    finer: [(b, FIELDS.index(b)) for a, b in PLACE_IMPLICATIONS if a == finer]
    for finer in ("address", "postcode", "city")
}
_PLACE_OF = {P_ADDRESS: "address", F_POSTCODE: "postcode", F_CITY: "city"}


def name_order(p: Profile) -> tuple[str, ...]:
    """Where the contact stands in a capped block's name order (``blocking._sort_key``)."""
    return tuple(_sort_key(p))


def counted_values(p: Profile, keys: Sequence[str]) -> list[tuple[int, str]]:
    """Every ``(kind, value)`` the contact holds (no empty value), in a fixed order: the
    contact's slots, whose counts the ``count`` stage returns by slot."""
    out: list[tuple[int, str]] = []
    for f, value in enumerate(p.values()):
        if f == F_HOUSE:  # as Rarity counts it: the address the number is part of
            value = f"{p.house} {p.street}" if p.house else ""
        if value:
            out.append((F0 + f, value))
    out.extend((K0 + k, value) for k, value in enumerate(keys) if value)
    for r, rule in enumerate(SURE_RULES):
        value = rule.value(p, rule.anchor(p))
        if value:
            out.append((S0 + r, value))
    email = RULES["email"]
    value = email.value(p, email.anchor(p))
    if value:
        out.append((C_EMAIL, value))
    out.extend((HOME, value) for value in _home_values(p))
    value = _address(p)
    if value:
        out.append((P_ADDRESS, value))
    return out


def grouped(kind: int, count: int, cap: int) -> bool:
    """Whether the group of contacts holding one value of ``kind`` is counted or blocked."""
    if count < 2:
        return False
    if kind in (F_POSTCODE, F_CITY, P_ADDRESS) or K0 <= kind < S0:
        return True  # places (any size) and blocks (capped when formed)
    if kind in (F_PHONE, HOME):
        return count < SHARED_HOLDERS
    if kind == S_MOBILE:
        return count <= cap or count < SHARED_HOLDERS
    return S0 <= kind <= C_EMAIL and count <= cap


def group_name(kind: int, value: str, segment: int = -1) -> str:
    """What a group (or a segment of one) is routed by."""
    return f"{kind}\0{value}" if segment < 0 else f"{kind}\0{value}\0{segment}"


def _window_starts(size: int, cap: int) -> list[int]:
    """Where a capped block's windows start in name order (``blocking._windows``:
    ``min(cap, WINDOW)`` wide, each starting half a window on, the last reaching the end)."""
    width = min(cap, WINDOW)
    step = max(1, width // 2)
    starts = [0]
    while starts[-1] + width < size:
        starts.append(starts[-1] + step)
    return starts


def window_count(size: int, cap: int) -> int:
    return len(_window_starts(size, cap))


def block_comparisons(size: int, cap: int) -> int:
    """Comparisons of a block of ``size`` contacts: all its pairs, or above ``cap`` those of its
    windows."""
    if size <= cap:
        return size * (size - 1) // 2
    width = min(cap, WINDOW)
    return sum(
        n * (n - 1) // 2 for n in (min(width, size - s) for s in _window_starts(size, cap))
    )


SEGMENT = 500
"""Contacts per segment of a place held by more (a city): its consecutive pairs in id order
are counted segment by segment, each segment starting at the last contact of the one before.
Small against a partition (``split.PARTITION_CONTACTS``), so that the segments of a city
routed to one partition vary little (2,000 made the fullest stats partition 1.5 times the
mean at 100k; 500, 1.15 times)."""
WINDOWS_PER_SEGMENT = 300
"""Windows per segment of a capped block (about 1,800 contacts)."""


@dataclass(frozen=True)
class Segments:
    """How large groups are cut: ``SEGMENT`` and ``WINDOWS_PER_SEGMENT`` (tests cut smaller)."""

    contacts: int = SEGMENT
    windows: int = WINDOWS_PER_SEGMENT

    def of_window(self, window: int) -> int:
        return (window - 1) // self.windows


def segmented(kind: int, count: int, cap: int, cut: Segments) -> bool:
    """Whether a group is cut into segments: a capped block, or a large place."""
    if K0 <= kind < S0:
        return count > cap
    return kind in _PLACE_OF and count > cut.contacts


def segments(
    kind: int, records: list[Any], cap: int, cut: Segments
) -> Iterator[tuple[tuple[str, int], list[int], list[int]]]:
    """Per ``[kind, value, id, slot, (name order)]`` record of one segmented group, its
    ``(id, slot)``, the segments it is in and (a capped block) its windows."""
    size = len(records)
    if K0 <= kind < S0:
        records.sort(key=lambda r: r[4])
        windows: list[list[int]] = [[] for _ in records]
        width = min(cap, WINDOW)
        for w, start in enumerate(_window_starts(size, cap), start=1):
            for pos in range(start, min(start + width, size)):
                windows[pos].append(w)
        for r, mine in zip(records, windows, strict=True):
            yield (r[2], r[3]), sorted({cut.of_window(w) for w in mine}), mine
        return
    records.sort(key=lambda r: r[2])
    step = cut.contacts
    for pos, r in enumerate(records):
        segs = {pos // step, (pos + 1) // step} if pos + 1 < size else {pos // step}
        yield (r[2], r[3]), sorted(segs), []


@dataclass(slots=True)
class Member:
    """A contact as a partition holds it: its profile, keys, and what it needs of the sizes of
    its groups (kept lean: a partition holds thousands)."""

    profile: Profile
    keys: tuple[str, ...]
    values: tuple[str, ...]
    rarity: list[int]
    """The count of each of its field values (``Rarity.at``)."""
    sure: list[tuple[str, int]]
    """Per sure rule, its value and how many contacts hold it."""
    homes: list[str]
    """Its home values held by fewer than ``SHARED_HOLDERS`` (its homes)."""
    capped: list[int]
    """The key kinds whose block (of its value) is above the cap."""
    counts: dict[int, int]
    """Per key kind, how many contacts hold its value."""
    windows: dict[int, list[int]]
    """Per capped key kind, the windows of its block the contact is in."""

    @classmethod
    def from_row(
        cls, row: Sequence[Any], cap: int
    ) -> tuple[Member, list[tuple[int, str, int, list[int]]]]:
        """The contact of a ``join`` row, and its ``(kind, value, count, segments)`` slots."""
        width = len(FIELDS) + 1
        profile = Profile.from_wire(row[:width])
        keys = tuple(row[width : width + len(KEY_NAMES)])
        counts = row[width + len(KEY_NAMES)]
        values = counted_values(profile, keys)
        if len(counts) != len(values):
            raise ValueError(f"contact {profile.id}: {len(counts)} counts for {len(values)} values")
        rarity = [0] * len(FIELDS)
        sure = [("", 0)] * len(SURE_RULES)
        homes: list[str] = []
        capped: list[int] = []
        key_counts: dict[int, int] = {}
        windows: dict[int, list[int]] = {}
        slots = []
        for (kind, value), entry in zip(values, counts, strict=True):
            count, segs, mine = entry if isinstance(entry, list) else (entry, [], [])
            slots.append((kind, value, count, segs))
            if kind < K0:
                rarity[kind - F0] = count
            elif kind < S0:
                key_counts[kind - K0] = count
                if count > cap:
                    capped.append(kind - K0)
                    windows[kind - K0] = mine
            elif kind < C_EMAIL:
                sure[kind - S0] = (value, count)
            elif kind == HOME and count < SHARED_HOLDERS:
                homes.append(value)
        return cls(
            profile, keys, profile.values(), rarity, sure, homes, capped, key_counts, windows
        ), slots


@dataclass
class Tally:
    """One partition's sums (``add`` them over all partitions for the run's)."""

    sure: int = 0
    contexts: Counter[tuple[str, str, int]] = field(default_factory=Counter)
    """(context, field, 0 exact / 1 similar / 2 pairs) -> count."""
    places: Counter[tuple[str, str, int]] = field(default_factory=Counter)
    """(finer, coarser, 0 agree / 1 pairs) -> count."""
    homes: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    namesakes: list[int] = field(default_factory=lambda: [0, 0, 0])
    """two_people, sure, sure_at_home."""
    comparisons: int = 0
    """Of the blocks (``count`` stage: ``block_comparisons`` of each key value's count)."""

    def add(self, other: Tally) -> None:
        self.sure += other.sure
        self.contexts.update(other.contexts)
        self.places.update(other.places)
        self.homes = [a + b for a, b in zip(self.homes, other.homes, strict=True)]
        self.namesakes = [a + b for a, b in zip(self.namesakes, other.namesakes, strict=True)]
        self.comparisons += other.comparisons

    def to_wire(self) -> dict[str, Any]:
        return {
            "sure": self.sure,
            "contexts": [[*k, n] for k, n in sorted(self.contexts.items())],
            "places": [[*k, n] for k, n in sorted(self.places.items())],
            "homes": self.homes,
            "namesakes": self.namesakes,
            "comparisons": self.comparisons,
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Tally:
        return cls(
            int(data["sure"]),
            Counter({(c, f, int(i)): int(n) for c, f, i, n in data["contexts"]}),
            Counter({(a, b, int(i)): int(n) for a, b, i, n in data["places"]}),
            [int(x) for x in data["homes"]],
            [int(x) for x in data["namesakes"]],
            int(data["comparisons"]),
        )

    def context_counts(self) -> ContextCounts:
        c = self.contexts
        return counts_from_wire({
            context: {n: [c[context, n, 0], c[context, n, 1], c[context, n, 2]] for n in fields}
            for context, fields in CONTEXT_PRIORS.items()
        })

    def dependence(self, contacts: int, mobiles: int) -> DependenceCounts:
        wire: dict[str, list[int]] = {
            f"{a}>{b}": [self.places[a, b, 0], self.places[a, b, 1]] for a, b in PLACE_IMPLICATIONS
        }
        return DependenceCounts.from_wire(
            {**wire, "homes": self.homes, "namesakes": [contacts, mobiles, *self.namesakes]}
        )


def tally(groups: Iterable[tuple[int, str, int, list[Member]]], cap: int) -> Tally:
    """The sums over ``groups`` (each whole, or a place's segment), as ``(kind, value, holders,
    members in id order)``."""
    out = Tally()
    for kind, value, n, members in groups:
        if S0 <= kind < C_EMAIL:
            rule = kind - S0
            if n <= cap:
                out.sure += sum(
                    not _earlier_rule(a, b, rule, cap) for a, b in _pairs(members)
                )
            if kind == S_MOBILE:
                if n <= cap:
                    _count_context(out, members, "mobile")
                if n < SHARED_HOLDERS:
                    _count_same_person(out, members)
        elif kind == C_EMAIL:
            _count_context(out, members, "email")
        elif kind == HOME:
            _count_namesakes(out, value, members)
        if kind in _PLACE_OF:
            _count_places(out, members, _PLACE_OF[kind])
        if (kind == P_ADDRESS and n < SHARED_HOLDERS) or kind == F_PHONE:
            _count_home(out, members)
    return out


def _pairs(members: list[Member]) -> Iterable[tuple[Member, Member]]:
    for x, a in enumerate(members):
        for b in members[x + 1 :]:
            yield a, b


def _earlier_rule(a: Member, b: Member, rule: int, cap: int) -> bool:
    """Whether an earlier sure rule already finds the pair (``count_sure_pairs``' one set)."""
    for r in range(rule):
        value, count = a.sure[r]
        if value and value == b.sure[r][0] and count <= cap:
            return True
    return False


def _count_context(out: Tally, members: list[Member], rule: str) -> None:
    fields = _RULE_FIELDS[rule]
    for a, b in _pairs(members):
        levels = field_levels(a.values, b.values)
        context = pair_context(levels, a.values, b.values)
        for name, i in fields.get(context, {}).items():
            level = levels[i]
            if level is None:
                continue
            out.contexts[context, name, 2] += 1
            out.contexts[context, name, 0] += level == "exact"
            out.contexts[context, name, 1] += level == "similar"


def _count_places(out: Tally, members: list[Member], finer: str) -> None:
    coarser = _COARSER[finer]
    for a, b in pairwise(members):
        if not different_people(a.values, b.values):
            continue
        for name, i in coarser:
            x, y = a.values[i], b.values[i]
            if x and y:
                out.places[finer, name, 1] += 1
                out.places[finer, name, 0] += x == y


def _count_home(out: Tally, members: list[Member]) -> None:
    h = out.homes
    for ma, mb in pairwise(members):
        a, b = ma.profile, mb.profile
        if not (a.last and b.last) or _one_mailbox(a, b) or _one_employer(a, b):
            continue
        h[0] += 1
        if a.last != b.last:
            continue
        h[1] += 1
        if a.dob and b.dob:
            h[2] += 1
            h[3] += a.dob == b.dob


def _count_namesakes(out: Tally, home: str, members: list[Member]) -> None:
    """Juniors and seniors at one home (``count_namesakes``' ``two_people``), each pair at the
    smallest home value the two share."""
    named = [m for m in members if m.profile.first and m.profile.last and m.profile.mobile]
    for ma, mb in _pairs(named):
        a, b = ma.profile, mb.profile
        if (a.first, a.last) != (b.first, b.last) or _one_employer(a, b):
            continue
        if min(set(ma.homes).intersection(mb.homes)) == home:
            out.namesakes[0] += field_levels(ma.values, mb.values)[F_MOBILE] == "different"


def _count_same_person(out: Tally, members: list[Member]) -> None:
    """One full name and one mobile (``count_namesakes``' ``sure`` and ``sure_at_home``)."""
    for ma, mb in _pairs(members):
        if _one_employer(ma.profile, mb.profile):
            continue
        out.namesakes[1] += 1
        out.namesakes[2] += not set(ma.homes).isdisjoint(_home_values(mb.profile))
