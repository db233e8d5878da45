"""What one agreement explains of another: the least share an agreeing field may count with.

The third step of scoring a pair (``evidence.Scorer``). One real fact shows in several fields
(an employer in its office address, main line and domain; an address in its postcode, city
and state; a home in a shared surname), and counting each as if independent adds the same
evidence two or five times. ``implied_floors`` says, from the pair's levels, which agreements
another one explains and how common they then count as. How far places nest and households
share a surname is counted in each CRM (``dependence``); these are the documented shares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from handlers.duplicate_merger.comparators import AGREE, NAMED, Level, shared_home
from handlers.duplicate_merger.field_priors import PRIORS
from handlers.duplicate_merger.name_evidence import GENERATION_SHARE, NAMESAKES_AT_HOME
from handlers.duplicate_merger.normalize import is_role_mailbox
from handlers.duplicate_merger.profile import (
    CITY,
    COMPANY,
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
state. How far a CRM's fields nest so is counted in it (``dependence``)."""


@dataclass(frozen=True)
class Explained:
    """How much one agreement explains another in this CRM (``dependence.explained_by``).

    Attributes:
        places: Per implication, P(two different people agree on the coarser place | they
            agree on the finer one): the least share the coarser place's agreement counts
            with. ``IMPLIED_SHARE`` until counted.
        household_surname: P(two different people share a surname | they share a home);
            ``HOUSEHOLD_SURNAME_SHARE`` until counted.
        namesakes_at_home: Other contacts of one's own full name at one's home (a junior, a
            senior), per contact: how often a shared full name is explained by a household
            rather than by one person. ``name_evidence.NAMESAKES_AT_HOME`` until counted.
    """

    places: Mapping[Implication, float] = field(
        default_factory=lambda: dict.fromkeys(PLACE_IMPLICATIONS, IMPLIED_SHARE)
    )
    household_surname: float = HOUSEHOLD_SURNAME_SHARE
    namesakes_at_home: float = NAMESAKES_AT_HOME


DOCUMENTED = Explained()
"""The documented dependence, for a CRM not counted (``dependence``)."""


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
    suffixed: bool = False,
    measured: Explained = DOCUMENTED,
) -> dict[int, float]:
    """The least share each agreeing field may count with, given what else agrees (see
    ``IMPLIED_SHARE``). ``email`` is one side's mailbox, ``counts`` the larger of the two
    sides' counts per field, ``suffixed`` whether either side carries a generational suffix,
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
    role = levels[EMAIL] == "exact" and is_role_mailbox(email)
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
    if levels[GENERATION] == "exact":
        explained(GENERATION, share=PRIORS["generation"].exact)  # both juniors: no new fact
    # An employer explains its main line and office: coworkers, not a family, so the shared
    # phone or address says nothing of the surname. Two coworkers share a full name about as
    # often as any two people do: the name keeps its own rarity (and ``HOUSEMATES``).
    family = (shared_home(levels) and not personal_mailbox and not employer) or suffixed
    if family:  # one mailbox is one person, not a family
        explained(LAST, share=measured.household_surname)
        if levels[LAST] in NAMED:
            explained(FIRST, share=GENERATION_SHARE)  # junior and senior
    return floors
