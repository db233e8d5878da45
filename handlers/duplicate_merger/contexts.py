"""Places across contexts, counted in this CRM: how often one person's records from two
contexts of a life (a work record and a personal one, before and after a job change or a move)
agree on a place.

A place belongs to a context (``evidence.OTHER_CONTEXT_PRIORS``): a work record carries the
office's city and a personal record the home's. How often the two agree depends on the CRM (a
city-wide business, a national one, how finely cities are written), so a fixed prior is right
for one CRM and wrong for the next. Where it is wrong, a namesake in the same city is weighed
as if the city were the person's own, and the number of namesakes grows with the CRM.

dm-block therefore counts it, without a training step, over the pairs a sure rule already
finds (``blocking.SURE_RULES``: the same full name and the same mobile, a mobile being one
person's) whose records come from different contexts (``evidence.other_contexts``). The
counts travel in every block message; ``context_priors`` turns them into the place priors
dm-score uses, each shrunk towards the documented prior by ``PRIOR_PAIRS`` pseudo-pairs, so a
small CRM keeps the prior and a large one its own measure.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from handlers.duplicate_merger.evidence import (
    OTHER_CONTEXT_PRIORS,
    FieldPrior,
    field_levels,
    other_contexts,
)
from handlers.duplicate_merger.profile import FIELDS, Profile

PLACE_FIELDS = tuple(OTHER_CONTEXT_PRIORS)
"""The fields whose agreement across contexts is counted (city, state, postcode, street...)."""

PRIOR_PAIRS = 20
"""Pseudo-pairs of the documented prior each count is shrunk with: below about that many
counted pairs the prior dominates; a CRM of 20,000 contacts already counts several hundred."""

LEAST_SHARE = 0.005
"""The least P(agree | same person, other contexts) a count may give: an agreement is never
counted as impossible for one person."""


@dataclass(frozen=True)
class PlaceCount:
    """Of ``pairs`` counted pairs holding the field on both records, how many agree exactly
    and how many similarly."""

    exact: int
    similar: int
    pairs: int

    def to_wire(self) -> list[int]:
        return [self.exact, self.similar, self.pairs]

    @classmethod
    def from_wire(cls, row: Sequence[object]) -> PlaceCount:
        exact, similar, pairs = (int(str(x)) for x in row)
        if min(exact, similar, pairs) < 0 or exact + similar > pairs:
            raise ValueError("a place count is out of range")
        return cls(exact, similar, pairs)


def count_places(profiles: Sequence[Profile], *, cap: int) -> dict[str, PlaceCount]:
    """Place agreement over the pairs with one full name and one mobile whose records come from
    different contexts; a mobile held by more than ``cap`` contacts is not one person's."""
    groups: dict[tuple[str, str, str], list[Profile]] = defaultdict(list)
    for p in profiles:
        if p.first and p.last and p.mobile:
            groups[(p.first, p.last, p.mobile)].append(p)
    index = {name: FIELDS.index(name) for name in PLACE_FIELDS}
    exact: Counter[str] = Counter()
    similar: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for members in groups.values():
        if not 2 <= len(members) <= cap:
            continue
        for x, a in enumerate(members):
            for b in members[x + 1 :]:
                levels = field_levels(a.values(), b.values())
                if not other_contexts(levels):
                    continue
                for name, i in index.items():
                    level = levels[i]
                    if level is None:
                        continue
                    pairs[name] += 1
                    exact[name] += level == "exact"
                    similar[name] += level == "similar"
    return {name: PlaceCount(exact[name], similar[name], pairs[name]) for name in PLACE_FIELDS}


def context_priors(counts: Mapping[str, PlaceCount]) -> dict[str, FieldPrior]:
    """The place priors for records of different contexts: each field's counted shares, shrunk
    towards ``OTHER_CONTEXT_PRIORS`` by ``PRIOR_PAIRS``; a field not counted keeps its prior."""
    out: dict[str, FieldPrior] = {}
    for name, prior in OTHER_CONTEXT_PRIORS.items():
        count = counts.get(name, PlaceCount(0, 0, 0))
        weight = count.pairs + PRIOR_PAIRS
        exact = (count.exact + PRIOR_PAIRS * prior.exact) / weight
        similar = (count.similar + PRIOR_PAIRS * prior.similar) / weight
        out[name] = FieldPrior(
            max(exact, LEAST_SHARE), similar, prior.spread, prior.disagreement_counts
        )
    return out
