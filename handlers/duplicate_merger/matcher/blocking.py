"""Blocking: four keys per contact, and beside them its birth date, full name and employer;
blocks of contacts sharing a key, big blocks capped.

Comparing every contact with every other is quadratic; blocking compares only contacts that
share a key. Twelve key kinds exist, in priority order, and each contact takes the first four
it has values for; beside them it always takes its birth date (counted as one of the four, but
never left out for them), its full name's codes (``names``) and its employer's (``employer``),
so a contact never costs more than seven block memberships. A contact with no
mailbox and no phone (a person-register record: a name, an address, a birth date) also takes
the four register kinds, up to ``REGISTER_KEYS``: with nothing that identifies a person on
its own, it is blocked on single fields as Splink's and recordlinkage's FEBRL examples block
(given name, surname, postcode) and on its house in its city, and the cap bounds what that
costs. Chosen by measurement
(``make bench-dm`` prints each key's share of the true pairs; the kinds below were kept because
each adds true pairs the others miss on FEBRL or on generated CRM data):

``email``   the normalised mailbox: the same person re-entered with another name spelling.
``phone``   the E.164 mobile, else the phone: the same person with a new mailbox or name.
``name``    NYSIIS of the surname + the first initial ("SNAT.r"), a nickname's initial read
            from its formal name (Bill -> W): a new phone and mailbox; NYSIIS absorbs most
            surname typos.
``street``  house number + postcode, else house number + street: the same household address
            (a street name is typed in more ways than a postcode: "s treet", "St.", "Str").
``dob``     the date of birth, never left out: one person's work and personal records with a
            new mailbox, phone and address and a mistyped name share nothing else (at 1M
            generated contacts 151 such true pairs that score in the review band were never
            compared while the four before it left it out).
``alias``   the alphabetically first of the two name codes + the place (postcode, else city,
            else state): first and last name swapped (the swapped record's surname code is the
            other's given-name code) and surname typos that change the code.
``postcode``, ``given``, ``surname`` (register records only) the postcode, the given name as
            blocked (a nickname's formal name) and the surname, each alone: the records whose
            name, address and birth date are all mistyped somewhere.
``house``   (register records only) house number + city: one address whose postcode was
            mistyped too, beside names swapped and mistyped (FEBRL3 holds 25 such true pairs
            no other key brings together).
``employer`` the company + the first initial (a nickname's formal name's), on every contact
            with a company: a business card typed again with a new mailbox and phone and the
            name mistyped past its code (at 1M, 34 more true pairs in the review band, for
            2.8 more comparisons per contact).

A block larger than ``cap`` would bring back the quadratic cost (one placeholder phone shared
by 400 records is 79,800 comparisons). Such a block is not dropped: its contacts are sorted by
name and cut into overlapping windows of ``WINDOW`` contacts (sorted neighbourhood), so each
contact meets at most ``2 * WINDOW`` neighbours through it, and the block is reported in
``BlockingReport.capped`` with its size. Everything here is deterministic: the same contacts in
any order give the same blocks, windows and report.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Sequence, Set
from dataclasses import dataclass, field
from itertools import compress, groupby, repeat
from operator import attrgetter, itemgetter

from handlers.duplicate_merger.matcher.normalize import blocking_given
from handlers.duplicate_merger.matcher.profile import FIELDS, Profile

KEY_NAMES = (
    "email", "phone", "name", "street", "dob", "alias", "names", "postcode", "given", "surname",
    "house", "employer",
)
"""Key kinds in priority order: a contact takes the first ``KEYS_PER_CONTACT`` it has values
for (a register record, ``REGISTER_KEYS``). The order also decides which block owns a pair
that shares several keys."""

KEYS_PER_CONTACT = 4
DOB_KEY = KEY_NAMES.index("dob")
"""A birth date is never left out for the four before it: see ``keys_of``."""
REGISTER_KEYS = 8
"""Keys of a contact with no mailbox and no phone (the last four kinds are theirs only).
Measured (best F1 / true pairs in blocks) at 4, 5, 6, 7 keys: FEBRL3 0.9861 / 97.5 %,
0.9891 / 98.1 %, 0.9909 / 98.6 %, 0.9912 / 98.8 %; FEBRL1 0.9950 -> 0.9970 and FEBRL4 0.9936
-> 0.9951 at 7. The generated CRM compares 10-14 % more pairs (its records without mailbox or
phone), with the same precision and recall. The eighth (``house``): FEBRL3's blocks hold
99.4 % of the true pairs instead of 99.0 % and its review band's F1 is 0.9923 instead of
0.9907; FEBRL1's blocks hold them all; the generated CRM compares 0.2 % more pairs."""


def _name_key(p: Profile) -> str:
    code = p.last_code
    return f"{code}.{blocking_given(p.first)[:1]}" if code else ""


def _alias_key(p: Profile) -> str:
    codes = sorted(c for c in (p.first_code, p.last_code) if c)
    if not codes:
        return ""
    anchor = p.postcode or p.city or p.state
    return f"{codes[0]}@{anchor}" if anchor else ""


def _names_key(p: Profile) -> str:
    first, last = p.first_code, p.last_code
    if not (first and last):
        return ""
    return f"{first}|{last}" if first < last else f"{last}|{first}"


def _employer_key(p: Profile) -> str:
    if not p.company:
        return ""
    return f"{p.company}.{blocking_given(p.first)[:1]}"


def _register(p: Profile) -> bool:
    """A person-register record: nothing that identifies a person on its own."""
    return not (p.email or p.mobile or p.phone)


def _house_key(p: Profile) -> str:
    return f"{p.house}@{p.city}" if p.house and p.city else ""


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
    "names": _names_key,
    "postcode": lambda p: p.postcode if _register(p) else "",
    "given": lambda p: blocking_given(p.first) if _register(p) else "",
    "surname": lambda p: p.last if _register(p) else "",
    "house": lambda p: _house_key(p) if _register(p) else "",
    "employer": _employer_key,
}
"""Each key kind's value ("" when the contact has none); ``keys_of`` is these, inlined."""


def keys_of(profile: Profile) -> tuple[str, ...]:
    """The contact's key values by kind: its first four available kinds set, the rest "".

    ``KEY_FUNCTIONS`` in ``KEY_NAMES`` order, inlined (dm-block keys every contact): the
    first five are plain field reads or cheap, so they are all read and the ones after the
    fourth set are blanked; the alias, the costly one, is computed only when fewer than four
    are set."""
    p = profile
    code = p.last_code
    values = [
        p.email,
        p.mobile or p.phone,
        f"{code}.{blocking_given(p.first)[:1]}" if code else "",
        _street_key(p),
        p.dob,
    ]
    taken = 0
    for k, value in enumerate(values):
        if value:
            if taken == KEYS_PER_CONTACT and k != DOB_KEY:
                values[k] = ""
            else:
                taken += 1
    alias = ""
    if taken < KEYS_PER_CONTACT:  # _alias_key, with the surname code already computed
        anchor = p.postcode or p.city or p.state
        first = p.first_code
        smallest = min(first, code) if first and code else first or code
        if smallest and anchor:
            alias = f"{smallest}@{anchor}"
    values.append(alias)
    taken += bool(alias)
    values.append(_names_key(p))  # every contact's, beside its four
    register = _register(p)
    register_values = (p.postcode, blocking_given(p.first), p.last, _house_key(p))
    for value in register_values if register else ("", "", "", ""):
        if value and taken < REGISTER_KEYS:
            values.append(value)
            taken += 1
        else:
            values.append("")
    values.append(_employer_key(p))  # every contact's with a company, beside its four
    return tuple(values)


class Rarity:
    """How many contacts hold each value of each field: the counts that weigh evidence.

    Built once over all contacts by dm-block; each profile in a block message carries its own
    counts, so dm-score weighs agreement without seeing the rest of the CRM. The counts are
    kept per contact, not per value: one array of 4-byte counts, a contact's ``len(FIELDS)``
    side by side (``at`` reads them in one slice, as each message row needs them). A CRM's
    million distinct mailboxes cost less as numbers than as the keys of a dict.
    """

    def __init__(self, profiles: Sequence[Profile]) -> None:
        self.total = len(profiles)
        width = len(FIELDS)
        self._counts = array("I", bytes(4 * width * self.total))
        for f, name in enumerate(FIELDS):
            # The house number is counted with its street: how many contacts hold the
            # address (one fact), not how many hold the number "12".
            values = list(map(_address if name == "house" else attrgetter(name), profiles))
            held = Counter(filter(None, values))  # "" (no value) is never counted
            self._counts[f::width] = array("I", map(held.get, values, repeat(0)))

    def at(self, index: int) -> list[int]:
        """The count of each field value of the contact at ``index`` (in the profiles given),
        in ``FIELDS`` order (0 if empty)."""
        width = len(FIELDS)
        return self._counts[index * width : (index + 1) * width].tolist()

    def column(self, name: str) -> array[int]:
        """Each contact's count of its ``name`` value, by the contact's index."""
        return self._counts[FIELDS.index(name) :: len(FIELDS)]


def _address(p: Profile) -> str:
    """The house number as the address it is part of (what ``Rarity`` counts)."""
    return f"{p.house} {p.street}" if p.house else ""


@dataclass(frozen=True, slots=True)
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


_sort_key = attrgetter("last", "first", "email", "phone", "id")
"""The name order an oversized block's windows follow (the id makes it total)."""


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
        column = list(map(itemgetter(k), key_values))
        held = Counter(column)
        report.keyed[key] = len(column) - held.pop("", 0)
        # Contacts sharing their value with another, found at C speed (most values are one
        # contact's), then sorted by value, and (the sort is stable) by index within a value:
        # the blocks come in value order, each one's members ascending.
        shared = list(
            compress(range(len(column)), map((1).__lt__, map(held.get, column, repeat(0))))
        )
        shared.sort(key=column.__getitem__)
        for value, group in groupby(shared, key=column.__getitem__):
            blocks.extend(blocks_of(key, value, list(group), profiles, cap, report))
    report.blocks = len(blocks)
    report.comparisons = sum(b.pair_count for b in blocks)
    return blocks, report


def blocks_of(
    key: str,
    value: str,
    members: list[int],
    profiles: Sequence[Profile],
    cap: int,
    report: BlockingReport,
) -> list[Block]:
    """The block of the ``members`` (ascending) sharing ``value``, or, above ``cap``, its
    windows, recorded in ``report`` as capped."""
    if len(members) <= cap:
        return [Block(key, value, tuple(members))]
    windows = list(_windows(members, profiles, cap))
    report.capped.append(CappedBlock(key, value, len(members), len(windows)))
    return [Block(key, value, w, (i, len(windows))) for i, w in enumerate(windows, start=1)]


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
