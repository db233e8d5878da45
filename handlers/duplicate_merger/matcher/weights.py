"""What a level weighs: how one person's two records tend to compare on each field, what a
shared name says, and what one agreement explains of another.

The second step of scoring a pair (``scorer.Scorer``), after ``levels``:

* **Priors** (``FieldPrior``): a level weighs ``log2`` of how often one person's records
  compare so, fixed and documented per field. Which priors hold depends on the pair's context
  (``levels.pair_context``): records of one context (one home, one mailbox) agree on their
  places, a work record and a personal one need not.
* **Names** (``namesake_excess``): the full name is the one agreement scored jointly:
  namesakes by chance (the two names' shares multiplied) and housemates of one name both
  happen, so a full name weighs no more than ``log2(m / (chance + housemates))``.
* **Floors** (``implied_floors``): one real fact shows in several fields (an employer in its
  office address, main line and domain; an address in its postcode, city and state; a home in
  a shared surname), and counting each as if independent adds the same evidence two or five
  times; an agreement another one explains counts no rarer than a floor.

These are the documented values; dm-block counts the context priors, how far places nest and
how households share a surname in its own CRM (``counted``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from handlers.duplicate_merger.matcher.levels import (
    AGREE,
    IDENTIFIERS,
    NAMED,
    Context,
    Level,
)
from handlers.duplicate_merger.matcher.normalize import is_role_mailbox
from handlers.duplicate_merger.matcher.profile import (
    CITY,
    COMPANY,
    DOB,
    DOMAIN,
    EMAIL,
    FIRST,
    GENERATION,
    HOUSE,
    LAST,
    MOBILE,
    PHONE,
    POSTCODE,
    STATE,
    STREET,
)

# Priors per field and context ------------------------------------------------------------

SAME_DOMAIN_DIFFER = 0.1
"""P(two records of one person hold different personal mailboxes at one organisation's
domain): an organisation gives a person one mailbox; two mailboxes there are two people, or
(less often) a typo, an alias or a re-created account."""


DATE_PART_SPREAD = 140.0
"""How many dates one retyped part of a date reaches (``levels.retyped_date_part``): about
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

CONTEXT_PRIORS: Mapping[Context, Mapping[str, FieldPrior]] = {
    "other": OTHER_CONTEXT_PRIORS,
    "unknown": {name: PRIORS[name] for name in OTHER_CONTEXT_PRIORS},
    "home": {"email": PRIORS["email"], "mobile": PRIORS["mobile"]},
}
"""The fields whose priors depend on the pair's context, and their documented priors; dm-block
counts each in its own CRM (``counted``):

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


def one_context_change(weights: list[float]) -> float:
    """Records of two contexts (``pair_context`` "other") differ on every identifier both hold
    for one reason: a job change or a work record beside a personal one moves the mailbox, the
    phone and the employer together. Counted each on its own, the one fact weighed two or
    three times: a work and a personal record of one full name scored 4 to 5 bits against,
    while two people differ on them anyway. The strongest difference stands for the move; the
    others weigh nothing. Sets their weights to 0 and returns the weight taken off (negative)."""
    return _strongest_difference_only(weights, IDENTIFIERS)


def _strongest_difference_only(weights: list[float], fields: Sequence[int]) -> float:
    """Keeps the strongest negative weight among ``fields`` (one fact, counted once), sets the
    other negative ones to 0 and returns the weight taken off (negative)."""
    against = [i for i in fields if weights[i] < 0.0]
    if len(against) < 2:
        return 0.0
    strongest = min(against, key=weights.__getitem__)
    taken = 0.0
    for i in against:
        if i != strongest:
            taken += weights[i]
            weights[i] = 0.0
    return taken


PLACES = (HOUSE, STREET, POSTCODE, CITY, STATE)
"""The fields of where a record was made: an address, its postcode, city and state."""


def one_move(weights: list[float]) -> float:
    """Places that differ differ for one reason, a move (or an office beside a home): the
    street address, postcode, city and state change together, and counted each on its own
    the one fact weighed up to five times (-17 bits for a move across states), more than a
    personal mailbox no one else holds says for the pair (13 bits at 20k contacts). The
    strongest difference stands for the move; the others weigh nothing. Sets their weights to
    0 and returns the weight taken off (negative)."""
    return _strongest_difference_only(weights, PLACES)


# Names ------------------------------------------------------------------------------------

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

TWIN_SHARE = 0.03
"""P(two different people who share a surname also share a birth date | their given names
differ): twins do (about 3 births in 100 in the US; a round prior, not measured here). A
birth date held by one contact in ten thousand weighed 13 bits beside a surname, and twins'
records (another given name, one surname, one date) scored as one person, so the date counts
no rarer than this share where the given names differ and the surname agrees."""

INITIAL_SHARE = 0.05
"""Least share an initial ("A.") agreeing with a name may count with: about one given name in
twenty starts with a given letter."""


NAMESAKES_AT_HOME = GENERATION_SHARE * HOUSEMATES
"""Documented other contacts of one's own full name at one's home, per contact (0.075): what
``counted`` shrinks its count towards, and what a CRM it cannot count keeps."""


def housemates_weight(
    first_exact: float, last_exact: float, total: int, per_contact: float = NAMESAKES_AT_HOME
) -> float:
    """What a full name would weigh if housemates of one name were its only way to recur
    among ``total`` contacts (``first_exact`` and ``last_exact`` are the names' ``m``), each
    contact having ``per_contact`` such housemates in the CRM (``counted`` counts it)."""
    return math.log2(first_exact) + math.log2(last_exact) - math.log2(per_contact / total)


def namesake_excess(first: float, last: float, housemates: float) -> float:
    """Bits to take off a full name's weights (``first`` + ``last``, each counted as if the
    names recurred only by chance) so that chance and ``housemates`` (``housemates_weight``)
    add up (``HOUSEMATES``). Zero or positive."""
    both = first + last
    excess = min(both, both + math.log2(2.0**-both + 2.0**-housemates))
    return excess if excess > 0.0 else 0.0


# Floors: what one agreement explains of another ------------------------------------------

HOUSEHOLD_SURNAME_SHARE = 0.25
"""P(two different people share a surname | they share a phone or a street address): family
members do. A shared household explains a shared surname, so the surname's rarity is not
counted twice; without this, two relatives on one landline look like one person."""

IMPLIED_SHARE = 0.5
"""How common a value counts when another agreement already explains it (the value's weight
is then about zero). One real fact shows in several fields, and counting each as if
independent adds the same evidence two or five times:

* an **employer** (same company or same company domain) explains its office address (house
  number, street, postcode, city, state), its main line (the ``phone`` property) and its
  domain: coworkers share them all. For two contacts at one company only person-level
  evidence (name, personal mailbox, mobile, birth date) can make them one person;
* a **place** explains what is at it: an address its postcode, city and state, and the
  landline or main line there; a postcode its city and state; a city its state;
* a **role mailbox** (``info@``, ``sales@``) is the organisation's, not a person's;
* a value **held by ``SHARED_HOLDERS`` or more contacts** (a main line, a shared mailbox, an
  office address) is shared by people, not one person's: one person has a few records."""

Implication = tuple[str, str]
"""A place and a coarser place it lies in: ``("postcode", "city")``."""

PLACE_IMPLICATIONS: tuple[Implication, ...] = (
    ("address", "postcode"),
    ("address", "city"),
    ("address", "state"),
    ("postcode", "city"),
    ("postcode", "state"),
    ("city", "state"),
)
"""The places whose agreement explains a coarser place's (``IMPLIED_SHARE``), as geography
nests them: a street address lies in one postcode, a postcode in one city, a city in one
state. How far a CRM's fields nest so is counted in it (``counted``)."""


@dataclass(frozen=True)
class Explained:
    """How much one agreement explains another in this CRM (``counted.explained_by``).

    Attributes:
        places: Per implication, P(two different people agree on the coarser place | they
            agree on the finer one): the least share the coarser place's agreement counts
            with. ``IMPLIED_SHARE`` until counted.
        household_surname: P(two different people share a surname | they share a home);
            ``HOUSEHOLD_SURNAME_SHARE`` until counted.
        namesakes_at_home: Other contacts of one's own full name at one's home (a junior, a
            senior), per contact: how often a shared full name is explained by a household
            rather than by one person. ``NAMESAKES_AT_HOME`` until counted.
    """

    places: Mapping[Implication, float] = field(
        default_factory=lambda: dict.fromkeys(PLACE_IMPLICATIONS, IMPLIED_SHARE)
    )
    household_surname: float = HOUSEHOLD_SURNAME_SHARE
    namesakes_at_home: float = NAMESAKES_AT_HOME


DOCUMENTED = Explained()
"""The documented dependence, for a CRM not counted (``counted``)."""


SHARED_HOLDERS = 10
"""Contacts holding one phone, mobile, mailbox or address from which it counts as shared.
Above what one person's records reach (FEBRL3 holds people with up to six records); the main
lines, shared mailboxes and office addresses held by fewer are explained by their employer or
home (``implied_floors``). At 5, FEBRL3's five- and six-record people lost their address as
evidence (best F1 0.9879 against 0.9912 at 10, measured with the register keys, before the
crossed-name rule; the generated CRM's precision and recall did not move)."""


def implied_floors(
    levels: Sequence[Level | None],
    email: str = "",
    counts: Sequence[int] | None = None,
    *,
    home: bool,
    suffixed: bool = False,
    measured: Explained = DOCUMENTED,
) -> dict[int, float]:
    """The least share each agreeing field may count with, given what else agrees (see
    ``IMPLIED_SHARE``). ``email`` is one side's mailbox, ``counts`` the larger of the two
    sides' counts per field, ``home`` whether the two share a home (``levels.shared_home``: the
    caller has it from the pair's context), ``suffixed`` whether either side carries a
    generational suffix,
    ``measured`` how far places nest and households share a surname in this CRM."""
    floors: dict[int, float] = {}
    places = measured.places

    def explained(*fields: int, share: float = IMPLIED_SHARE) -> None:
        for f in fields:
            floors[f] = max(floors.get(f, 0.0), share)

    if counts is not None:
        for f in (PHONE, MOBILE, EMAIL, HOUSE):
            if levels[f] == "exact" and counts[f] >= SHARED_HOLDERS:
                explained(f)
    # A mailbox two records hold under two full names (another given name and another surname)
    # is a desk's or a family's, as a role mailbox is: its rarity says who shares it, not
    # that they are one person (at 100k generated contacts, every such pair of 2 to 8 bits
    # holding an office's mailbox, line and address was two coworkers).
    shared = levels[FIRST] == "different" and levels[LAST] == "different"
    role = levels[EMAIL] == "exact" and (shared or is_role_mailbox(email))
    if role:
        explained(EMAIL)
    personal_mailbox = levels[EMAIL] == "exact" and EMAIL not in floors
    address = levels[HOUSE] == "exact" and levels[STREET] in AGREE
    if address:
        explained(STREET)  # the house number's count is the whole address's
        explained(POSTCODE, share=places["address", "postcode"])
        explained(CITY, share=places["address", "city"])
        explained(STATE, share=places["address", "state"])
        if levels[PHONE] == "exact":
            explained(PHONE)  # the landline or main line at that address
    if levels[POSTCODE] == "exact":
        explained(CITY, share=places["postcode", "city"])
        explained(STATE, share=places["postcode", "state"])
    if levels[CITY] == "exact":
        explained(STATE, share=places["city", "state"])
    employer = levels[COMPANY] in AGREE or levels[DOMAIN] == "exact"
    if employer:
        explained(DOMAIN, PHONE, HOUSE, STREET, POSTCODE, CITY, STATE)
    if levels[EMAIL] == "similar" and (levels[FIRST] in NAMED or levels[LAST] in NAMED):
        # Mailboxes are made from names (john.smith@ at two providers, jsmith1@ and jsmith2@,
        # lwalker@ for Larry and for Loriann Walker): where a name agrees, a similar mailbox is
        # that name again, not a new fact. Its exact count would make it look rarer the larger
        # the CRM (1 / contacts), while the mailboxes one edit away grow with it.
        explained(EMAIL)
    if levels[POSTCODE] == "similar":
        # A postcode one digit off is the neighbouring area as often as a typo (a US city holds
        # dozens of consecutive codes): where it is the city again, the city says so itself.
        explained(POSTCODE)
    if levels[HOUSE] == "exact" and levels[STREET] not in AGREE:
        # A house number names a house only on its street. Its count is the whole address's
        # (``blocking.Rarity``), so with another street, or none on one side, that count is
        # of an address the two records do not share: "8" would weigh as rare as "8 Diamond
        # Street". Small numbers are shared by strangers all over a register; FEBRL's
        # highest-scoring false pairs were such numbers beside a shared given name or surname.
        explained(HOUSE)
    if levels[HOUSE] == "similar":
        # A house number one digit off is the house next door as often as a typo, and more so
        # the larger the CRM; the street's agreement is counted on its own.
        explained(HOUSE)
    if levels[DOB] == "exact" and levels[FIRST] == "different" and levels[LAST] in NAMED:
        explained(DOB, share=TWIN_SHARE)  # twins: one surname, one date, two given names
    if levels[GENERATION] == "exact":
        explained(GENERATION, share=PRIORS["generation"].exact)  # both juniors: no new fact
    # An employer explains its main line and office: coworkers, not a family, so the shared
    # phone or address says nothing of the surname. Two coworkers share a full name about as
    # often as any two people do: the name keeps its own rarity (and ``HOUSEMATES``).
    family = (home and not personal_mailbox and not employer) or suffixed
    if family:  # one mailbox is one person, not a family
        explained(LAST, share=measured.household_surname)
        if levels[LAST] in NAMED:
            explained(FIRST, share=GENERATION_SHARE)  # junior and senior
    return floors
