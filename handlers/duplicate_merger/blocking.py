"""Blocking: up to four keys per contact, blocks of contacts sharing a key, big blocks capped.

Comparing every contact with every other is quadratic; blocking compares only contacts that
share a key. Six key kinds exist, in priority order, and each contact takes the first four it
has values for, so a contact never costs more than four block memberships while one without
email or phone (a person-register record) still gets four useful keys. Chosen by measurement
(``make bench-dm`` prints each key's share of the true pairs; the kinds below were kept because
each adds true pairs the others miss on FEBRL or on generated CRM data):

``email``   the normalised mailbox: the same person re-entered with another name spelling.
``phone``   the E.164 mobile, else the phone: the same person with a new mailbox or name.
``name``    NYSIIS of the surname + the first initial ("SNAT.r"), a nickname's initial read
            from its formal name (Bill -> W): a new phone and mailbox; NYSIIS absorbs most
            surname typos.
``street``  house number + postcode, else house number + street: the same household address
            (a street name is typed in more ways than a postcode: "s treet", "St.", "Str").
``dob``     the date of birth.
``alias``   the alphabetically first of the two name codes + the place (postcode, else city,
            else state): first and last name swapped (the swapped record's surname code is the
            other's given-name code) and surname typos that change the code.

A block larger than ``cap`` would bring back the quadratic cost (one placeholder phone shared
by 400 records is 79,800 comparisons). Such a block is not dropped: its contacts are sorted by
name and cut into overlapping windows of ``WINDOW`` contacts (sorted neighbourhood), so each
contact meets at most ``2 * WINDOW`` neighbours through it, and the block is reported in
``BlockingReport.capped`` with its size. Everything here is deterministic: the same contacts in
any order give the same blocks, windows and report.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from dataclasses import dataclass, field

from handlers.duplicate_merger.normalize import blocking_given, is_role_mailbox
from handlers.duplicate_merger.profile import FIELDS, Profile

KEY_NAMES = ("email", "phone", "name", "street", "dob", "alias")
"""Key kinds in priority order: a contact takes the first ``KEYS_PER_CONTACT`` it has values
for. The order also decides which block owns a pair that shares several keys."""

KEYS_PER_CONTACT = 4
_HOUSE = FIELDS.index("house")


def _name_key(p: Profile) -> str:
    code = p.last_code
    return f"{code}.{blocking_given(p.first)[:1]}" if code else ""


def _alias_key(p: Profile) -> str:
    codes = sorted(c for c in (p.first_code, p.last_code) if c)
    if not codes:
        return ""
    anchor = p.postcode or p.city or p.state
    return f"{codes[0]}@{anchor}" if anchor else ""


def _street_key(p: Profile) -> str:
    if p.house and p.postcode:  # a street is typed more ways than its postcode
        return f"{p.house}@{p.postcode}"
    return f"{p.house} {p.street}" if p.street else ""


KEY_FUNCTIONS: dict[str, Callable[[Profile], str]] = {
    "email": lambda p: p.email,
    "phone": lambda p: p.mobile or p.phone,
    "name": _name_key,
    "street": _street_key,
    "dob": lambda p: p.dob,
    "alias": _alias_key,
}


def keys_of(profile: Profile) -> tuple[str, ...]:
    """The contact's key values by kind: its first four available kinds set, the rest ""."""
    values: list[str] = []
    taken = 0
    for name in KEY_NAMES:
        value = KEY_FUNCTIONS[name](profile) if taken < KEYS_PER_CONTACT else ""
        taken += bool(value)
        values.append(value)
    return tuple(values)


def _sure_email(p: Profile) -> str:
    return "" if is_role_mailbox(p.email) else p.email


def _sure_name(extra: Callable[[Profile], str]) -> Callable[[Profile], str]:
    def key(p: Profile) -> str:
        value = extra(p)
        return f"{p.first}|{p.last}|{value}" if p.first and p.last and value else ""

    return key


SURE_RULES: tuple[Callable[[Profile], str], ...] = (
    _sure_email,
    _sure_name(lambda p: p.mobile),
    _sure_name(lambda p: p.dob),
    _sure_name(lambda p: f"{p.house} {p.street}" if p.street else ""),
)
"""Rules two different people almost never meet: the same personal mailbox; the same full
name and mobile, or birth date, or street address (a main line is shared by coworkers). Used only to estimate how common duplicates are."""


def count_sure_pairs(profiles: Sequence[Profile], *, cap: int) -> int:
    """Distinct pairs meeting a sure rule, ignoring values shared by more than ``cap`` contacts
    (a placeholder address is not evidence). One rule at a time, to bound memory."""
    found: set[tuple[int, int]] = set()
    for rule in SURE_RULES:
        values = [rule(p) for p in profiles]
        counts = Counter(v for v in values if v)
        groups: dict[str, list[int]] = defaultdict(list)
        for index, value in enumerate(values):
            if value and 2 <= counts[value] <= cap:
                groups[value].append(index)
        for members in groups.values():
            for x, i in enumerate(members):
                for j in members[x + 1 :]:
                    found.add((i, j))
        del values, counts, groups
    return len(found)


class Rarity:
    """How many contacts hold each value of each field: the counts that weigh evidence.

    Built once over all contacts by dm-block; each profile in a block message carries its own
    counts, so dm-score weighs agreement without seeing the rest of the CRM.
    """

    def __init__(self, profiles: Iterable[Profile]) -> None:
        self.counts: dict[str, Counter[str]] = {name: Counter() for name in FIELDS}
        total = 0
        columns = [self.counts[name] for name in FIELDS]
        for p in profiles:
            total += 1
            for column, value in zip(columns, self._counted(p), strict=True):
                if value:
                    column[value] += 1
        self.total = total

    @staticmethod
    def _counted(p: Profile) -> tuple[str, ...]:
        """The values counted: as ``values()``, but the house number counted with its street
        (how many contacts hold the address, one fact, not how many hold the number "12")."""
        values = list(p.values())
        if p.house:
            values[_HOUSE] = f"{p.house} {p.street}"
        return tuple(values)

    def of(self, profile: Profile) -> list[int]:
        """The count of each of ``profile``'s field values, in ``FIELDS`` order (0 if empty)."""
        return [
            self.counts[name][value] if value else 0
            for name, value in zip(FIELDS, self._counted(profile), strict=True)
        ]


@dataclass(frozen=True)
class Block:
    """Contacts sharing one key value (or one window of an oversized block).

    Attributes:
        key: Which key (``email``, ``phone``, ``name``, ``alias``).
        value: The shared key value.
        members: Indexes of the contacts (into the profile list), sorted.
        window: For a capped block, ``(window number, windows in the block)``; else None.
    """

    key: str
    value: str
    members: tuple[int, ...]
    window: tuple[int, int] | None = None

    @property
    def pair_count(self) -> int:
        n = len(self.members)
        return n * (n - 1) // 2


@dataclass(frozen=True)
class CappedBlock:
    """An oversized block, reported: which key value, how many contacts, how it was cut."""

    key: str
    value: str
    size: int
    windows: int


@dataclass
class BlockingReport:
    """What blocking did, for logs, the run summary and the digest."""

    contacts: int = 0
    blocks: int = 0
    comparisons: int = 0
    capped: list[CappedBlock] = field(default_factory=list)
    keyed: dict[str, int] = field(default_factory=dict)

    @property
    def comparisons_per_contact(self) -> float:
        return self.comparisons / self.contacts if self.contacts else 0.0


def _sort_key(p: Profile) -> tuple[str, ...]:
    return (p.last, p.first, p.email, p.phone, p.id)


def form_blocks(
    profiles: Sequence[Profile], *, cap: int, keys: Sequence[tuple[str, ...]] | None = None
) -> tuple[list[Block], BlockingReport]:
    """Blocks of two or more contacts per key value; blocks above ``cap`` cut into windows.

    ``keys`` are the precomputed ``keys_of`` per profile (computed here when omitted).
    """
    if cap < 2:
        raise ValueError("cap must be at least 2")
    key_values = keys if keys is not None else [keys_of(p) for p in profiles]
    report = BlockingReport(contacts=len(profiles))
    blocks: list[Block] = []
    for k, key in enumerate(KEY_NAMES):
        groups: dict[str, list[int]] = defaultdict(list)
        for index, values in enumerate(key_values):
            value = values[k]
            if value:
                groups[value].append(index)
        report.keyed[key] = sum(len(m) for m in groups.values())
        for value in sorted(groups):
            members = groups[value]
            if len(members) < 2:
                continue
            if len(members) <= cap:
                blocks.append(Block(key, value, tuple(sorted(members))))
                continue
            windows = list(_windows(members, profiles, cap))
            report.capped.append(CappedBlock(key, value, len(members), len(windows)))
            blocks.extend(
                Block(key, value, w, (i, len(windows))) for i, w in enumerate(windows, start=1)
            )
    report.blocks = len(blocks)
    report.comparisons = sum(b.pair_count for b in blocks)
    return blocks, report


WINDOW = 12
"""Width of the sorted-neighbourhood windows an oversized block is cut into."""


def _windows(
    members: list[int], profiles: Sequence[Profile], cap: int
) -> Iterator[tuple[int, ...]]:
    """Windows of ``min(cap, WINDOW)`` members in name order, each starting half a window on,
    so every contact meets its nearest neighbours by name, and at most ``2 * WINDOW`` of them."""
    width = min(cap, WINDOW)
    ordered = sorted(members, key=lambda i: _sort_key(profiles[i]))
    step = max(1, width // 2)
    start = 0
    while True:
        window = ordered[start : start + width]
        yield tuple(sorted(window))
        if start + width >= len(ordered):
            return
        start += step


def owner_key(
    a_keys: Sequence[str], b_keys: Sequence[str], capped: Set[tuple[str, str]]
) -> int:
    """Index of the first key two contacts share in an uncapped block, else -1.

    A pair sharing several keys is scored once, in the block of the first such key; a pair
    whose shared blocks are all capped may be met in several windows and is scored in each
    (the result is the same row, written again).
    """
    for k, key in enumerate(KEY_NAMES):
        value = a_keys[k]
        if value and value == b_keys[k] and (key, value) not in capped:
            return k
    return -1
