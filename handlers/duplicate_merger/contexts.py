"""Fields across contexts, counted in this CRM: how often one person's records agree on a field
when they come from two contexts of a life, from an unknown one, or from one home.

A place belongs to a context (``field_priors.OTHER_CONTEXT_PRIORS``): a work record carries the
office's city and a personal record the home's. A mailbox and a mobile belong to one too: at
one home a person holds one of each. How often one person's records agree on them depends on
the CRM (a city-wide business, a national one, how finely cities are written, whether its
forms ask for a personal or a work mailbox), so a fixed prior is right for one CRM and wrong
for the next. Where it is wrong, a namesake in the same city is weighed as if the city were the
person's own, or a junior at his father's address as if his second mailbox were a typo, and
the number of both grows with the CRM.

dm-block therefore counts them, without a training step, over the pairs a sure rule already
finds (``RULES``, of ``blocking.SureRule``'s kind), per context (``field_priors.pair_context``),
the fields ``field_priors.CONTEXT_PRIORS`` names for it. The rule is the same full name and the
same mobile (a mobile is one person's), and for the mobile itself the same full name and the
same personal mailbox (``RULE_FIELD``): a field is never counted over the pairs its own
agreement selects. The counts travel in every block message; ``context_priors`` turns them
into the priors dm-score uses, each shrunk towards the documented prior by ``PRIOR_PAIRS``
pseudo-pairs, so a small CRM keeps the prior and a large one its own measure.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

from handlers.duplicate_merger.blocking import NAME_AND_MOBILE, SureRule
from handlers.duplicate_merger.comparators import field_levels
from handlers.duplicate_merger.field_priors import CONTEXT_PRIORS, Context, FieldPrior, pair_context
from handlers.duplicate_merger.profile import FIELDS, Profile

RULES: Mapping[str, SureRule] = {
    "mobile": NAME_AND_MOBILE,
    "email": SureRule(attrgetter("email"), named=True, personal=True),
}
"""The sure rules the counts rest on, by the field they pair on (with the full name)."""

RULE_FIELD: Mapping[str, str] = {"mobile": "email"}
"""The rule (``RULES``) a field is counted over: the mobile's for every field but the mobile
itself, which is counted over one full name and one personal mailbox."""

PRIOR_PAIRS = 20
"""Pseudo-pairs of the documented prior each count is shrunk with: below about that many
counted pairs the prior dominates; a CRM of 20,000 contacts already counts dozens to hundreds
per context."""

LEAST_SHARE = 0.005
"""The least P(agree | same person) a count may give: an agreement is never counted as
impossible for one person (``FieldPrior.differ`` floors a disagreement the same way)."""


@dataclass(frozen=True)
class AgreementCount:
    """Of ``pairs`` counted pairs holding the field on both records, how many agree exactly
    and how many similarly."""

    exact: int
    similar: int
    pairs: int

    def to_wire(self) -> list[int]:
        return [self.exact, self.similar, self.pairs]

    @classmethod
    def from_wire(cls, row: Sequence[object]) -> AgreementCount:
        exact, similar, pairs = (int(str(x)) for x in row)
        if min(exact, similar, pairs) < 0 or exact + similar > pairs:
            raise ValueError("an agreement count is out of range")
        return cls(exact, similar, pairs)


ContextCounts = dict[Context, dict[str, AgreementCount]]
"""Per counted context, per field (``field_priors.CONTEXT_PRIORS``), its agreement count."""


def _sure_groups(profiles: Sequence[Profile], rule: SureRule, cap: int) -> list[list[Profile]]:
    """Contacts meeting ``rule`` together, in groups of 2 to ``cap``: a value held by more is
    not one person's."""
    groups: dict[str, list[Profile]] = defaultdict(list)
    for p in profiles:
        value = rule.value(p, rule.anchor(p))
        if value:
            groups[value].append(p)
    return [members for members in groups.values() if 2 <= len(members) <= cap]


def count_contexts(profiles: Sequence[Profile], *, cap: int) -> ContextCounts:
    """Field agreement, per context, over the pairs each field's sure rule finds
    (``RULE_FIELD``)."""
    index = {
        (context, rule): {
            name: FIELDS.index(name) for name in fields if RULE_FIELD.get(name, "mobile") == rule
        }
        for context, fields in CONTEXT_PRIORS.items()
        for rule in RULES
    }
    exact: Counter[tuple[Context, str]] = Counter()
    similar: Counter[tuple[Context, str]] = Counter()
    pairs: Counter[tuple[Context, str]] = Counter()
    for rule, sure in RULES.items():
        for members in _sure_groups(profiles, sure, cap):
            for x, a in enumerate(members):
                av = a.values()
                for b in members[x + 1 :]:
                    bv = b.values()
                    levels = field_levels(av, bv)
                    context = pair_context(levels, av, bv)
                    for name, i in index.get((context, rule), {}).items():
                        level = levels[i]
                        if level is None:
                            continue
                        pairs[context, name] += 1
                        exact[context, name] += level == "exact"
                        similar[context, name] += level == "similar"
    return {
        context: {
            name: AgreementCount(exact[context, name], similar[context, name], pairs[context, name])
            for name in fields
        }
        for context, fields in CONTEXT_PRIORS.items()
    }


def counts_to_wire(counts: ContextCounts) -> dict[str, dict[str, list[int]]]:
    """The counts as a block message carries them."""
    return {
        context: {name: count.to_wire() for name, count in fields.items()}
        for context, fields in counts.items()
    }


def counts_from_wire(data: Mapping[str, Mapping[str, Sequence[object]]]) -> ContextCounts:
    """The counts of a block message: every counted context and field, each in range."""
    return {
        context: {name: AgreementCount.from_wire(data[context][name]) for name in fields}
        for context, fields in CONTEXT_PRIORS.items()
    }


def context_priors(counts: Mapping[Context, Mapping[str, AgreementCount]]) -> dict[
    Context, dict[str, FieldPrior]
]:
    """The priors per context: each field's counted shares, shrunk towards
    ``CONTEXT_PRIORS`` by ``PRIOR_PAIRS``; a field not counted keeps its prior."""
    out: dict[Context, dict[str, FieldPrior]] = {}
    for context, documented in CONTEXT_PRIORS.items():
        counted = counts.get(context, {})
        out[context] = {}
        for name, prior in documented.items():
            count = counted.get(name, AgreementCount(0, 0, 0))
            weight = count.pairs + PRIOR_PAIRS
            exact = (count.exact + PRIOR_PAIRS * prior.exact) / weight
            similar = (count.similar + PRIOR_PAIRS * prior.similar) / weight
            out[context][name] = FieldPrior(
                max(exact, LEAST_SHARE), similar, prior.spread, prior.disagreement_counts
            )
    return out
