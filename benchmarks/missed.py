"""Where dm's true pairs go: recall by error class, and pairs completeness per key kind.

``error_class`` sorts a true pair by what differs between its two records, read from the
normalised fields with plain string measures (Damerau-Levenshtein from jellyfish, the given-
name table dm blocks with), not with dm's comparators, so a class says what the data did and
not what dm made of it. One class per pair, the first that fits:

* ``swapped parts``: each record's given name is the other's surname (exactly or one or two
  edits off);
* ``nickname/initial``: the given names differ as a nickname, a formal name or an initial of
  it; the surname the same or mistyped;
* ``name typo``: either name part one or two edits off, none otherwise different;
* ``other name change``: a name part missing on one side or different otherwise (a marriage,
  a replaced name);
* the same full name, then by what else agrees: ``same name + mailbox``; ``same name, shared
  phone/company`` (the mailbox different or missing on one side: the company main line or an
  employer beside the name); ``same name, same address``; ``same name, nothing else shared``.

``completeness`` reads the blocks as dm-block formed them (a capped block's windows included)
and says, per key kind, the share of true pairs that kind brings together, the share only it
does, and the share no key does (never blocked).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence, Set

import jellyfish

from handlers.duplicate_merger.matcher import KEY_NAMES, Block, Profile, nickname_related

Pair = tuple[str, str]

CLASSES = (
    "swapped parts",
    "nickname/initial",
    "name typo",
    "other name change",
    "same name + mailbox",
    "same name, shared phone/company",
    "same name, same address",
    "same name, nothing else shared",
)

TYPO_EDITS = 2


def _typo(a: str, b: str) -> bool:
    return bool(a and b) and jellyfish.damerau_levenshtein_distance(a, b) <= TYPO_EDITS


def _near(a: str, b: str) -> bool:
    return bool(a) and (a == b or _typo(a, b))


def error_class(a: Profile, b: Profile) -> str:
    """The class of a true pair's difference (``CLASSES``)."""
    same_first, same_last = a.first == b.first and a.first, a.last == b.last and a.last
    if not (same_first and same_last):
        if _near(a.first, b.last) and _near(a.last, b.first):
            return "swapped parts"
        if a.first and b.first and not same_first and nickname_related(a.first, b.first) and (
            _near(a.last, b.last)
        ):
            return "nickname/initial"
        if _near(a.first, b.first) and _near(a.last, b.last):
            return "name typo"
        return "other name change"
    if a.email and a.email == b.email:
        return "same name + mailbox"
    if (a.phone and a.phone == b.phone) or (a.mobile and a.mobile == b.mobile) or (
        a.company and a.company == b.company
    ):
        return "same name, shared phone/company"
    if a.house and a.street and (a.house, a.street) == (b.house, b.street):
        return "same name, same address"
    return "same name, nothing else shared"


def compared_keys(
    truth: Set[Pair], profiles: Sequence[Profile], blocks: Sequence[Block]
) -> dict[Pair, tuple[str, ...]]:
    """Per true pair, the key kinds whose blocks (or windows of a capped block) hold both."""
    index = {p.id: i for i, p in enumerate(profiles)}
    wanted: dict[int, list[tuple[int, Pair]]] = defaultdict(list)
    for pair in truth:
        i, j = index[pair[0]], index[pair[1]]
        wanted[i].append((j, pair))
    found: dict[Pair, set[str]] = defaultdict(set)
    for block in blocks:
        members = block.members
        if not any(m in wanted for m in members):
            continue
        inside = set(members)
        for m in members:
            for other, pair in wanted.get(m, ()):
                if other in inside:
                    found[pair].add(block.key)
    return {pair: tuple(k for k in KEY_NAMES if k in keys) for pair, keys in found.items()}


def completeness(truth: Set[Pair], keys: Mapping[Pair, tuple[str, ...]]) -> str:
    """One line: per key kind, the share of true pairs it blocks (and blocks alone); then the
    share never blocked."""
    total = len(truth) or 1
    by_kind: Counter[str] = Counter()
    alone: Counter[str] = Counter()
    for kinds in keys.values():
        by_kind.update(kinds)
        if len(kinds) == 1:
            alone[kinds[0]] += 1
    parts = [
        f"{kind} {by_kind[kind] / total:.1%} ({alone[kind] / total:.1%} alone)"
        for kind in KEY_NAMES
        if by_kind[kind]
    ]
    never = len(truth) - len(keys)
    return (
        f"  pairs completeness per key kind (share of true pairs its blocks hold; alone: no "
        f"other kind's do): {', '.join(parts)}; any {len(keys) / total:.1%}, never blocked "
        f"{never:,} ({never / total:.1%})"
    )


def recall_by_class(
    truth: Set[Pair],
    profiles: Sequence[Profile],
    blocked: Set[Pair],
    proposed: Set[Pair],
    automatic: Set[Pair],
) -> str:
    """A table: per error class, true pairs, the share never blocked, and the automatic and
    review band's recall; with the missed pairs' share of all missed."""
    by_id = {p.id: p for p in profiles}
    rows: dict[str, Counter[str]] = {c: Counter() for c in CLASSES}
    for pair in truth:
        row = rows[error_class(by_id[pair[0]], by_id[pair[1]])]
        row["pairs"] += 1
        row["blocked"] += pair in blocked
        row["band"] += pair in proposed
        row["auto"] += pair in automatic
    missed = sum(r["pairs"] - r["band"] for r in rows.values()) or 1
    lines = [
        f"  recall by error class: {'class':32} {'pairs':>7} {'never blocked':>13} "
        f"{'auto R':>7} {'band R':>7} {'missed':>7} {'of missed':>9}"
    ]
    for name, row in rows.items():
        n = row["pairs"]
        if not n:
            continue
        miss = n - row["band"]
        lines.append(
            f"  {'':22} {name:32} {n:7,} {(n - row['blocked']) / n:13.1%} "
            f"{row['auto'] / n:7.3f} {row['band'] / n:7.3f} {miss:7,} {miss / missed:9.1%}"
        )
    return "\n".join(lines)
