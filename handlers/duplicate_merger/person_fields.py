"""A person's own fields, counted in this CRM: how often one person's two records hold the same
given name, surname and birth date, a similar one (a typo, a nickname or initial, a retyped
date part) or another.

``field_priors.PRIORS`` documents them (0.85 exact, 0.10 similar for each), but how often one
person's records carry a typo or a nickname is a property of the CRM (its forms, who typed the
records, whether a card was scanned), as the context priors are (``contexts``). Where the
documented share of similar values is too low, a typo pair scores too low: on the generated CRM
(20k) pairs scoring -2 to 0 bits were duplicates 0.54 of the time where the scores said 0.33.

dm-block counts them, without a training step, over the pairs a sure rule finds whose rule
does not involve the field: the same personal mailbox (``RULE``), which pairs no name and no
date. A swapped name counts as exact, as the scorer weighs it. The counts travel in every block
message; ``person_priors`` turns them into the priors dm-score uses for every context, shrunk
towards the documented prior by ``contexts.PRIOR_PAIRS`` pseudo-pairs (``contexts.shrunk``).
A register without mailboxes counts nothing and keeps the documented priors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from operator import attrgetter

from handlers.duplicate_merger.blocking import SureRule
from handlers.duplicate_merger.comparators import field_levels
from handlers.duplicate_merger.contexts import AgreementCount, shrunk, sure_groups
from handlers.duplicate_merger.field_priors import PRIORS, FieldPrior
from handlers.duplicate_merger.profile import FIELDS, Profile

PERSON_FIELDS = ("first", "last", "dob")
"""The fields counted: a person's names and birth date, which no context changes."""

RULE = SureRule(attrgetter("email"), personal=True)
"""One personal mailbox: one person's, whatever the records' names and dates say."""

_INDEX = tuple((name, FIELDS.index(name)) for name in PERSON_FIELDS)

PersonCounts = dict[str, AgreementCount]
"""Per field of ``PERSON_FIELDS``, its agreement count."""


def count_person_fields(profiles: Sequence[Profile], *, cap: int) -> PersonCounts:
    """Agreement of each person field over the pairs of one personal mailbox (groups of at
    most ``cap``: a mailbox held by more is not one person's)."""
    exact: Counter[str] = Counter()
    similar: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for members in sure_groups(profiles, RULE, cap):
        for x, a in enumerate(members):
            av = a.values()
            for b in members[x + 1 :]:
                levels = field_levels(av, b.values())
                for name, i in _INDEX:
                    level = levels[i]
                    if level is None:
                        continue
                    pairs[name] += 1
                    exact[name] += level in ("exact", "swapped")
                    similar[name] += level == "similar"
    return {name: AgreementCount(exact[name], similar[name], pairs[name]) for name in PERSON_FIELDS}


def person_to_wire(counts: PersonCounts) -> dict[str, list[int]]:
    """The counts as a block message carries them."""
    return {name: counts[name].to_wire() for name in PERSON_FIELDS}


def person_from_wire(data: Mapping[str, Sequence[object]]) -> PersonCounts:
    """The counts of a block message: every person field, each in range."""
    return {name: AgreementCount.from_wire(data[name]) for name in PERSON_FIELDS}


def person_priors(counts: Mapping[str, AgreementCount]) -> dict[str, FieldPrior]:
    """The priors of the person fields: counted, shrunk towards ``PRIORS``."""
    return {
        name: shrunk(counts.get(name, AgreementCount(0, 0, 0)), PRIORS[name])
        for name in PERSON_FIELDS
    }
