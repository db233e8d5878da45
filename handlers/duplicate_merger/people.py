"""A run's proposals as people: what the reviewer is asked about, once per person.

Two rules, used by the digest and by the review page alike (so the page shows what the digest
promised):

- A proposal touching a record that an automatic merge of the same run absorbed, or is still
  to merge, is not shown: confirming it could only end on "a contact is gone". The kept record
  of a finished automatic merge stays proposable (it is in the CRM, holding both records' data).
- The remaining proposals are grouped by connected component: Ann A ~ Ann B and Ann B ~ Ann C
  are one person with three records, one digest item and one page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from handlers.duplicate_merger.matcher import split_pair_key

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Person:
    """One person's proposals of a run, best score first, and the records they join."""

    pairs: tuple[Row, ...]
    records: tuple[str, ...]

    @property
    def key(self) -> str:
        """The best pair's key: the pair the digest links the person's page through."""
        return str(self.pairs[0]["pair_key"])


def absorbed(
    automatic: Iterable[Row],
    decision_of: Callable[[str], Row | None],
    merge_of: Callable[[str], Row | None],
) -> frozenset[str]:
    """Records the run's automatic merges took (or will take) out of the CRM.

    A finished merge names the record it absorbed; a merge not finished yet (queued, in flight)
    has not chosen its kept record, so both of its records count; an automatic pair recorded as
    not a duplicate (an undone merge) takes nothing."""
    gone: set[str] = set()
    for pair in automatic:
        key = str(pair["pair_key"])
        decision = decision_of(key) or {}
        state = decision.get("decision")
        if state == "not_a_duplicate":
            continue
        record = merge_of(str(decision["merge_id"])) if state == "merged" and decision.get(
            "merge_id") else None
        if record and record.get("merged_id"):
            gone.add(str(record["merged_id"]))
        else:
            gone.update(split_pair_key(key))
    return frozenset(gone)


def people(proposals: Iterable[Row], gone: frozenset[str] = frozenset()) -> list[Person]:
    """The proposals not touching a ``gone`` record, grouped by person; the person with the
    best pair first, each person's pairs best score first."""
    kept = [p for p in proposals if not gone.intersection(split_pair_key(str(p["pair_key"])))]
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]  # path halving: the chains stay short
            x = parent[x]
        return x

    for pair in kept:
        low, high = split_pair_key(str(pair["pair_key"]))
        parent[root(low)] = root(high)
    groups: dict[str, list[Row]] = {}
    for pair in sorted(kept, key=lambda p: (-float(p.get("score", 0)), str(p["pair_key"]))):
        groups.setdefault(root(split_pair_key(str(pair["pair_key"]))[0]), []).append(pair)
    return [
        Person(tuple(rows), tuple(sorted({c for r in rows for c in split_pair_key(str(r["pair_key"]))})))
        for rows in groups.values()
    ]


def person_of(pair_key: str, found: Iterable[Person]) -> Person | None:
    """The person whose proposals include ``pair_key``."""
    return next((p for p in found if any(r["pair_key"] == pair_key for r in p.pairs)), None)
