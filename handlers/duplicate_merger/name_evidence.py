"""What a shared name says: how often two different people share a full name, and what an
initial agreeing with a name weighs.

The full name is the one agreement scored jointly (``evidence.Scorer``): namesakes by chance
(the two names' shares multiplied) and housemates of one name both happen, so a full name
weighs no more than ``log2(m / (chance + housemates))`` (``namesake_excess``).
"""

from __future__ import annotations

import math

GENERATION_SHARE = 0.05
"""P(two different people who share a surname and a home also share the given name): juniors
and seniors, and the other names families reuse (a round prior, not measured here). A shared
home explains a shared surname (``HOUSEHOLD_SURNAME_SHARE``); this share is what the given
name then still says. It also holds when either record carries a generational suffix."""

HOUSEMATES = 1.5
"""People the average person lives with (US households hold about 2.5 people). With
``GENERATION_SHARE`` it says how often two different contacts share a full name as
housemates of one name: ``GENERATION_SHARE * HOUSEMATES / contacts``, however rare the name.
Namesakes by chance (the two names' shares multiplied) and housemates of one name both
happen, so their rates add: a full name weighs ``log2(m / (chance + housemates))``. Without
the housemates a rare full name alone outweighs the prior and a junior merges with his
father. A bound (the larger of the two, not their sum) scored every name rarer than it
alike, while at 1M contacts far more pairs hold a name near it: the review band's precision
fell with the CRM's size (0.974 / 0.971 / 0.960 at 20k / 100k / 1M, ``make bench-dm``); with
the sum it is 0.981 / 0.982 / 0.980."""

INITIAL_SHARE = 0.05
"""Least share an initial ("A.") agreeing with a name may count with: about one given name in
twenty starts with a given letter."""


NAMESAKES_AT_HOME = GENERATION_SHARE * HOUSEMATES
"""Documented other contacts of one's own full name at one's home, per contact (0.075): what
``dependence`` shrinks its count towards, and what a CRM it cannot count keeps."""


def housemates_weight(
    first_exact: float, last_exact: float, total: int, per_contact: float = NAMESAKES_AT_HOME
) -> float:
    """What a full name would weigh if housemates of one name were its only way to recur
    among ``total`` contacts (``first_exact`` and ``last_exact`` are the names' ``m``), each
    contact having ``per_contact`` such housemates in the CRM (``dependence`` counts it)."""
    return math.log2(first_exact) + math.log2(last_exact) - math.log2(per_contact / total)


def namesake_excess(first: float, last: float, housemates: float) -> float:
    """Bits to take off a full name's weights (``first`` + ``last``, each counted as if the
    names recurred only by chance) so that chance and ``housemates`` (``housemates_weight``)
    add up (``HOUSEMATES``). Zero or positive."""
    both = first + last
    excess = min(both, both + math.log2(2.0**-both + 2.0**-housemates))
    return excess if excess > 0.0 else 0.0
