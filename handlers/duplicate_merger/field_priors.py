"""How one person's two records tend to compare on each field, by the context they come from.

The second step of scoring a pair (``evidence.Scorer``): a level weighs ``log2`` of how often
one person's records compare so (``FieldPrior``), fixed and documented per field. Which priors
hold depends on the pair's context (``pair_context``): records of one context (one home, one
mailbox) agree on their places, a work record and a personal one need not. dm-block counts the
context priors in its own CRM (``contexts``); these are the documented ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from handlers.duplicate_merger.comparators import Level, shared_home
from handlers.duplicate_merger.profile import COMPANY, DOMAIN, EMAIL, PHONE

SAME_DOMAIN_DIFFER = 0.1
"""P(two records of one person hold different personal mailboxes at one organisation's
domain): an organisation gives a person one mailbox; two mailboxes there are two people, or
(less often) a typo, an alias or a re-created account."""


DATE_PART_SPREAD = 140.0
"""How many dates one retyped part of a date reaches (``comparators.retyped_date_part``): about
100 years, 12 months and 28 to 31 days. It widens the date's count as ``FieldPrior.spread``
does for a typo, so a date that agrees with another on two of its parts weighs as the share of
contacts whose date does, not as rare as the date itself."""


@dataclass(frozen=True)
class FieldPrior:
    """How one person's two records tend to compare on a field (fixed priors, in [0, 1]).

    Attributes:
        exact: P(exactly equal | same person).
        similar: P(similar but not equal | same person).
        spread: How many distinct values a "similar" match could have come from; widens the
            value's count for similar matches, so a typo never looks rarer than its source.
        disagreement_counts: Whether a difference is evidence against. Not for the company
            domain: it differs exactly when the employer (already compared) does.
    """

    exact: float
    similar: float
    spread: float = 4.0
    disagreement_counts: bool = True

    @property
    def differ(self) -> float:
        return max(1.0 - self.exact - self.similar, 0.005)


PRIORS: Mapping[str, FieldPrior] = {
    "first": FieldPrior(0.85, 0.10),
    "last": FieldPrior(0.85, 0.10),
    "email": FieldPrior(0.55, 0.05),
    "phone": FieldPrior(0.60, 0.05),
    "mobile": FieldPrior(0.70, 0.05),
    "company": FieldPrior(0.65, 0.15),
    "domain": FieldPrior(0.60, 0.0, disagreement_counts=False),
    "house": FieldPrior(0.85, 0.05),
    "street": FieldPrior(0.80, 0.12),
    "city": FieldPrior(0.85, 0.05),
    "postcode": FieldPrior(0.85, 0.07),
    "state": FieldPrior(0.90, 0.0),
    "dob": FieldPrior(0.85, 0.10),
    "generation": FieldPrior(0.98, 0.0),
}


OTHER_CONTEXT_PRIORS: Mapping[str, FieldPrior] = {
    "city": FieldPrior(0.30, 0.02),
    "state": FieldPrior(0.40, 0.0),
    "postcode": FieldPrior(0.10, 0.02),
    "house": FieldPrior(0.05, 0.01),
    "street": FieldPrior(0.05, 0.02),
}
"""The place fields when two records come from different contexts of a life: an identifier
of the context (mailbox, phone, employer, domain) is on both and differs, and none agrees (a
work record and a personal one, the records before and after a job change or a move; the
mobile is the person's own and moves with them, so it does not say "same context"). A place is
an attribute of a context, as an office address is of an employer: such records agree on a
city only as often as where a person works and where they live do, and differ on it, or on the
street address, without saying "someone else". ``PRIORS`` still hold for records of one context
(the same mailbox, phone or address) and for data without contact identifiers (a person
register)."""

Context = Literal["one", "other", "unknown", "home"]
"""Which context of a life two records come from, as far as their fields tell
(``pair_context``): ``one`` (an identifier agrees, or neither record holds any), ``other``
(identifiers on both, all different), ``unknown`` (no identifier on both records, one on
either) or ``home`` (one home, ``shared_home``: the same street address or landline; an
office's address or main line reads the same way)."""

CONTEXT_PRIORS: Mapping[Context, Mapping[str, FieldPrior]] = {
    "other": OTHER_CONTEXT_PRIORS,
    "unknown": {name: PRIORS[name] for name in OTHER_CONTEXT_PRIORS},
    "home": {"email": PRIORS["email"], "mobile": PRIORS["mobile"]},
}
"""The fields whose priors depend on the pair's context, and their documented priors; dm-block
counts each in its own CRM (``contexts``):

* ``other``: the places (``OTHER_CONTEXT_PRIORS``);
* ``unknown``: the places again. A record with no mailbox or phone (a card scanned at an
  event, a form that asked for a mobile only) beside one with them may be of either context,
  and how often such records of one person agree on a place is a property of the CRM;
* ``home``: the mailbox and the mobile. One person's records at one home (or office) are of
  one context and hold one mailbox and one mobile there about as often as the CRM says, so two
  mailboxes or two mobiles at one home are a family (a junior and a senior) as often as it
  says. In the generated CRM (100k) one person's records at one address hold one mailbox
  99.8 % of the time, against 55 % over all contexts (``PRIORS``); two mailboxes under one
  full name at one address were one person in 2 of 83 pairs.

Uncounted, ``unknown`` and ``home`` keep ``PRIORS``."""


IDENTIFIERS = (EMAIL, PHONE, COMPANY, DOMAIN)
"""The fields that name a context of a life: a mailbox, a phone, an employer and its domain."""


def pair_context(levels: Sequence[Level | None], av: Sequence[str], bv: Sequence[str]) -> Context:
    """The context two records come from (``Context``), from their levels and values: one home
    first (its address or landline holds one context), then any identifier that agrees (one
    context), then identifiers on both that all differ (other contexts)."""
    if shared_home(levels):
        return "home"
    differs = False
    for i in IDENTIFIERS:
        level = levels[i]
        if level == "different":
            differs = True
        elif level is not None:
            return "one"
    if differs:
        return "other"
    if any(av[i] or bv[i] for i in IDENTIFIERS):
        return "unknown"
    return "one"  # a person register: no record holds a contact identifier


def one_context_change(weights: list[float]) -> float:
    """Records of two contexts (``pair_context`` "other") differ on every identifier both hold
    for one reason: a job change or a work record beside a personal one moves the mailbox, the
    phone and the employer together. Counted each on its own, the one fact weighed two or
    three times: a work and a personal record of one full name scored 4 to 5 bits against,
    while two people differ on them anyway. The strongest difference stands for the move; the
    others weigh nothing. Sets their weights to 0 and returns the weight taken off (negative)."""
    against = [i for i in IDENTIFIERS if weights[i] < 0.0]
    if len(against) < 2:
        return 0.0
    strongest = min(against, key=weights.__getitem__)
    taken = 0.0
    for i in against:
        if i != strongest:
            taken += weights[i]
            weights[i] = 0.0
    return taken
