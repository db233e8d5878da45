"""Scoring: rarity-weighted evidence for and against two contacts being one person.

Each field present on both contacts is compared at one of four levels (exact, similar, swapped
with the other name field, different) and contributes a weight in bits, Fellegi-Sunter style,
with no training step:

* agreement on a value held by ``count`` of the ``N`` contacts weighs ``log2(m / (count/N))``:
  a surname three contacts share is strong evidence, "Smith" is weak, and a placeholder phone
  shared by 400 contacts is almost none. ``m`` (how often one person's two records agree on the
  field) is a fixed, documented prior per field, not learned;
* a similar value (one typo, a nickname, another format) weighs the same way with a smaller
  ``m`` and a wider ``count`` (a typo is rare, the value it came from is not);
* disagreement weighs ``log2(P(differ | same person))``: evidence against, strongest for fields
  a person rarely changes (date of birth, first name), weakest for those they do (phone,
  mailbox, employer).

The score adds the weights to a baseline: the log-odds that two contacts picked at random are
one person, estimated from a count of "sure" pairs over the same data (``baseline``). A score
therefore reads as log-odds in bits, 0 is even odds and 10 about a thousand to one, whatever
the size of the CRM. The same two profiles and counts always give the same score, terms and
band.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from handlers.common.strings import jaro_winkler
from handlers.duplicate_merger.normalize import email_domain, is_role_mailbox, nickname_related
from handlers.duplicate_merger.profile import FIELDS, Profile
from handlers.duplicate_merger.similarity import within_one_edit

Band = Literal["automatic", "propose", "record_only"]
Level = Literal["exact", "similar", "swapped", "different"]

SURE_RECALL = 0.5
"""Assumed share of true duplicate pairs that a "sure" rule finds (same mailbox; same full
name and phone, birth date or street address). The baseline divides the count of sure pairs
by it, as Splink's ``estimate_probability_two_random_records_match`` divides by its recall."""

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
    """

    places: Mapping[Implication, float] = field(
        default_factory=lambda: dict.fromkeys(PLACE_IMPLICATIONS, IMPLIED_SHARE)
    )
    household_surname: float = HOUSEHOLD_SURNAME_SHARE


DOCUMENTED = Explained()
"""The documented dependence, for a CRM not counted (``dependence``)."""


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

SHARED_HOLDERS = 10
"""Contacts holding one phone, mobile, mailbox or address from which it counts as shared.
Above what one person's records reach (FEBRL3 holds people with up to six records); the main
lines, shared mailboxes and office addresses held by fewer are explained by their employer or
home (``implied_floors``). At 5, FEBRL3's five- and six-record people lost their address as
evidence (best F1 0.9879 against 0.9912 at 10, measured with the register keys, before the
crossed-name rule; the generated CRM's precision and recall did not move)."""

INITIAL_SHARE = 0.05
"""Least share an initial ("A.") agreeing with a name may count with: about one given name in
twenty starts with a given letter."""

SAME_DOMAIN_DIFFER = 0.1
"""P(two records of one person hold different personal mailboxes at one organisation's
domain): an organisation gives a person one mailbox; two mailboxes there are two people, or
(less often) a typo, an alias or a re-created account."""

LABELS = {
    "first": "first name",
    "last": "surname",
    "email": "email",
    "phone": "phone",
    "mobile": "mobile",
    "company": "company",
    "domain": "company domain",
    "house": "address",
    "street": "street",
    "city": "city",
    "postcode": "postcode",
    "state": "state",
    "dob": "date of birth",
    "generation": "generational suffix",
}


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


@dataclass(frozen=True)
class Term:
    """One field's evidence.

    Attributes:
        field: Which field.
        agreed: Whether the values agree (exactly, similarly or swapped).
        level: ``exact``, ``similar``, ``swapped`` or ``different``.
        rarity: Share of contacts holding the agreed value (0 for a disagreement).
        weight: Bits of evidence, positive for, negative against.
    """

    field: str
    agreed: bool
    level: Level
    rarity: float
    weight: float

    def to_item(self) -> dict[str, object]:
        return {
            "field": self.field,
            "agreed": self.agreed,
            "level": self.level,
            "rarity": round(self.rarity, 8),
            "weight": round(self.weight, 3),
        }


@dataclass(frozen=True)
class Against:
    """Evidence against: a reason a person reads and its strength in bits."""

    reason: str
    strength: float

    def to_item(self) -> dict[str, object]:
        return {"reason": self.reason, "strength": round(self.strength, 3)}


@dataclass(frozen=True)
class Thresholds:
    """Band limits on the score (bits): ``automatic`` merges, ``propose`` goes to review."""

    automatic: float
    propose: float

    def band(self, score: float) -> Band:
        if score >= self.automatic:
            return "automatic"
        if score >= self.propose:
            return "propose"
        return "record_only"


EVIDENCE_CLASSES = ("person", "employer", "home", "name")
"""What a pair's agreement rests on, strongest kind first (``evidence_class``): a personal
identifier (``person``), an employer (``employer``), a home (``home``), or the name and place
alone (``name``). Reviewer decisions are counted per class, so a CRM whose reviewer rejects
the pairs an employer explains raises the bands of that class only (``calibration``)."""


@dataclass(frozen=True)
class Bands:
    """The band limits of one run: ``default``, and per evidence class where this CRM's
    reviewer decisions moved them (``calibration.calibrate_by_evidence``)."""

    default: Thresholds
    by_evidence: Mapping[str, Thresholds] = field(default_factory=dict)

    def for_evidence(self, evidence: str) -> Thresholds:
        return self.by_evidence.get(evidence, self.default)


@dataclass(frozen=True)
class ScoredPair:
    """A compared pair with its evidence, score, band and one-line explanation."""

    pair_key: str
    low_id: str
    high_id: str
    score: float
    baseline: float
    terms: tuple[Term, ...]
    against: tuple[Against, ...]
    band: Band
    explanation: str
    evidence: str = "name"
    """The pair's evidence class (``EVIDENCE_CLASSES``)."""


def pair_key(a: str, b: str) -> str:
    """``min#max`` of two contact ids: A-B and B-A are one key."""
    if a == b:
        raise ValueError("a contact is not its own duplicate")
    if "#" in a or "#" in b:
        raise ValueError("contact ids may not contain '#'")
    return f"{a}#{b}" if a < b else f"{b}#{a}"


def split_pair_key(key: str) -> tuple[str, str]:
    """The two contact ids of a pair key (low, high); refuses anything else."""
    low, sep, high = key.partition("#")
    if not sep or not low or not high or "#" in high or not low < high:
        raise ValueError(f"{key!r} is not a pair key")
    return low, high


def baseline(total: int, sure_pairs: int) -> float:
    """Log-odds (bits) that two contacts drawn at random from ``total`` are one person.

    Estimated by a count over the data, not learned: ``sure_pairs`` pairs meet a rule almost
    no two different people meet, and they are about ``SURE_RECALL`` of all duplicates. Capped
    at -1 bit (a CRM that is mostly duplicates is still scored on evidence).
    """
    n = max(total, 2)
    all_pairs = n * (n - 1) / 2.0
    estimate = max(sure_pairs, 1) / SURE_RECALL
    return min(math.log2(estimate / all_pairs), -1.0)


# Field comparisons -----------------------------------------------------------------------
#
# Each comparator is a pure function of two normalised values, cached: common names and
# cities meet each other again and again across pairs.


def _symmetric(fn: Callable[[str, str], Level]) -> Callable[[str, str], Level]:
    cached = lru_cache(maxsize=65_536)(fn)

    def compare(a: str, b: str) -> Level:
        if a == b:
            return "exact"
        return cached(a, b) if a < b else cached(b, a)

    compare.__doc__ = fn.__doc__
    return compare


def _close(a: str, b: str, threshold: float) -> bool:
    """Jaro-Winkler >= threshold, skipping the computation when it cannot be reached."""
    if abs(len(a) - len(b)) > 3 or (a[0] != b[0] and a[:2] != b[1::-1]):
        return False
    return jaro_winkler(a, b) >= threshold


@_symmetric
def _name_level(a: str, b: str) -> Level:
    """Names: one edit, Jaro-Winkler >= 0.9, one name inside the other, or spacing only."""
    if within_one_edit(a, b) or _close(a, b, 0.9):
        return "similar"
    if " " in a or " " in b:
        ta, tb = set(a.split()), set(b.split())
        if ta & tb and (ta <= tb or tb <= ta):
            return "similar"  # "smith" vs "smith jones"
        if a.replace(" ", "") == b.replace(" ", ""):
            return "similar"
    return "different"


@_symmetric
def _first_level(a: str, b: str) -> Level:
    """Given names: one name in the nickname data set, an initial of the other, or as names."""
    if nickname_related(a, b):
        return "similar"
    return _name_level(a, b)


@_symmetric
def _text_level(a: str, b: str) -> Level:
    """Streets and cities: spacing only, or Jaro-Winkler >= 0.9."""
    if a.replace(" ", "") == b.replace(" ", "") or _close(a, b, 0.9):
        return "similar"
    return "different"


def _code_level(a: str, b: str) -> Level:
    """House numbers and postcodes: one edit."""
    if a == b:
        return "exact"
    return "similar" if within_one_edit(a, b) else "different"


def _same_org_domain(a: str, b: str) -> bool:
    """Two personal (not role) mailboxes at one organisation's (not a free-mail) domain."""
    domain = email_domain(a)
    return bool(domain) and domain == email_domain(b) and not (
        is_role_mailbox(a) or is_role_mailbox(b)
    )


def _email_level(a: str, b: str) -> Level:
    """Mailboxes: the same name (6+ characters) at another provider, or one edit; but two
    mailboxes at one organisation's domain are two mailboxes (``davida@`` and ``davidb@`` are
    coworkers' pattern, not a typo)."""
    if a == b:
        return "exact"
    if _same_org_domain(a, b):
        return "different"
    local_a, local_b = a.partition("@")[0], b.partition("@")[0]
    if local_a == local_b and len(local_a) >= 6:
        return "similar"
    return "similar" if within_one_edit(a, b) else "different"


def _phone_level(a: str, b: str) -> Level:
    """Phones: the same last seven digits (another area code), or one digit off."""
    if a == b:
        return "exact"
    if a[-7:] == b[-7:] or within_one_edit(a, b):
        return "similar"
    return "different"


@_symmetric
def _company_level(a: str, b: str) -> Level:
    """Employers: the same first word ("acme labs" vs "acme"), or Jaro-Winkler >= 0.92."""
    if a.split(" ", 1)[0] == b.split(" ", 1)[0] or _close(a, b, 0.92):
        return "similar"
    return "different"


def _dob_level(a: str, b: str) -> Level:
    """Birth dates: one digit off or swapped, or day and month swapped."""
    if a == b:
        return "exact"
    if within_one_edit(a, b):
        return "similar"
    if a[:4] == b[:4] and a[4:6] == b[6:8] and a[6:8] == b[4:6]:
        return "similar"
    return "different"


def _state_level(a: str, b: str) -> Level:
    """States: one edit between names or codes of three or more letters is a typo ("qdl" or
    "qlf" for "qld", "califronia"); no two US or Australian states are that close, while
    two-letter codes one letter apart are two states (WA and VA, SA and WA). A typo is
    neither for nor against (``PRIORS["state"].similar`` is 0, so it weighs nothing)."""
    if a == b:
        return "exact"
    if min(len(a), len(b)) >= 3 and within_one_edit(a, b):
        return "similar"
    return "different"


def _exact_only(a: str, b: str) -> Level:
    return "exact" if a == b else "different"


COMPARATORS: Mapping[str, Callable[[str, str], Level]] = {
    "first": _first_level,
    "last": _name_level,
    "email": _email_level,
    "phone": _phone_level,
    "mobile": _phone_level,
    "company": _company_level,
    "domain": _exact_only,
    "house": _code_level,
    "street": _text_level,
    "city": _text_level,
    "postcode": _code_level,
    "state": _state_level,
    "dob": _dob_level,
    "generation": _exact_only,
}
_COMPARE = tuple(COMPARATORS[name] for name in FIELDS)
_PRIORS = tuple(PRIORS[name] for name in FIELDS)

(
    _FIRST, _LAST, _EMAIL, _PHONE, _MOBILE, _COMPANY, _DOMAIN, _HOUSE, _STREET, _CITY,
    _POSTCODE, _STATE, _DOB, _GENERATION,
) = (
    FIELDS.index(f)
    for f in (
        "first", "last", "email", "phone", "mobile", "company", "domain", "house", "street",
        "city", "postcode", "state", "dob", "generation",
    )
)
_AGREE = ("exact", "similar")
_NAMED = ("exact", "similar", "swapped")


def shared_home(levels: Sequence[Level | None]) -> bool:
    """Whether two contacts share a home: the same phone (a landline) or street address."""
    return levels[_PHONE] == "exact" or (
        levels[_HOUSE] == "exact" and levels[_STREET] in _AGREE
    )


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
        for f in (_PHONE, _MOBILE, _EMAIL, _HOUSE):
            if levels[f] == "exact" and counts[f] >= SHARED_HOLDERS:
                explained(f)
    role = levels[_EMAIL] == "exact" and is_role_mailbox(email)
    if role:
        explained(_EMAIL)
    personal_mailbox = levels[_EMAIL] == "exact" and _EMAIL not in floors
    address = levels[_HOUSE] == "exact" and levels[_STREET] in _AGREE
    if address:
        explained(_STREET)  # the house number's count is the whole address's
        explained(_POSTCODE, share=places["address", "postcode"])
        explained(_CITY, share=places["address", "city"])
        explained(_STATE, share=places["address", "state"])
        if levels[_PHONE] == "exact":
            explained(_PHONE)  # the landline or main line at that address
    if levels[_POSTCODE] == "exact":
        explained(_CITY, share=places["postcode", "city"])
        explained(_STATE, share=places["postcode", "state"])
    if levels[_CITY] == "exact":
        explained(_STATE, share=places["city", "state"])
    employer = levels[_COMPANY] in _AGREE or levels[_DOMAIN] == "exact"
    if employer:
        explained(_DOMAIN, _PHONE, _HOUSE, _STREET, _POSTCODE, _CITY, _STATE)
    if levels[_EMAIL] == "similar" and (levels[_FIRST] in _NAMED or levels[_LAST] in _NAMED):
        # Mailboxes are made from names (john.smith@ at two providers, jsmith1@ and jsmith2@,
        # lwalker@ for Larry and for Loriann Walker): where a name agrees, a similar mailbox is
        # that name again, not a new fact. Its exact count would make it look rarer the larger
        # the CRM (1 / contacts), while the mailboxes one edit away grow with it.
        explained(_EMAIL)
    if levels[_POSTCODE] == "similar":
        # A postcode one digit off is the neighbouring area as often as a typo (a US city holds
        # dozens of consecutive codes): where it is the city again, the city says so itself.
        explained(_POSTCODE)
    if levels[_HOUSE] == "exact" and levels[_STREET] not in _AGREE:
        # A house number names a house only on its street. Its count is the whole address's
        # (``blocking.Rarity``), so with another street, or none on one side, that count is
        # of an address the two records do not share: "8" would weigh as rare as "8 Diamond
        # Street". Small numbers are shared by strangers all over a register; FEBRL's
        # highest-scoring false pairs were such numbers beside a shared given name or surname.
        explained(_HOUSE)
    if levels[_HOUSE] == "similar":
        # A house number one digit off is the house next door as often as a typo, and more so
        # the larger the CRM; the street's agreement is counted on its own.
        explained(_HOUSE)
    if levels[_GENERATION] == "exact":
        explained(_GENERATION, share=PRIORS["generation"].exact)  # both juniors: no new fact
    # An employer explains its main line and office: coworkers, not a family, so the shared
    # phone or address says nothing of the surname. Two coworkers share a full name about as
    # often as any two people do: the name keeps its own rarity (and ``HOUSEMATES``).
    family = (shared_home(levels) and not personal_mailbox and not employer) or suffixed
    if family:  # one mailbox is one person, not a family
        explained(_LAST, share=measured.household_surname)
        if levels[_LAST] in _NAMED:
            explained(_FIRST, share=GENERATION_SHARE)  # junior and senior
    return floors


def evidence_class(levels: Sequence[Level | None], email: str = "") -> str:
    """The strongest kind of fact two contacts agree on (``EVIDENCE_CLASSES``): the same
    personal mailbox, mobile or birth date; else the same employer (company or domain); else
    the same home (phone or street address); else only their name and place."""
    if (levels[_EMAIL] == "exact" and not is_role_mailbox(email)) or levels[_MOBILE] == "exact" or (
        levels[_DOB] == "exact"
    ):
        return "person"
    if levels[_COMPANY] in _AGREE or levels[_DOMAIN] == "exact":
        return "employer"
    if shared_home(levels):
        return "home"
    return "name"


def automatic_vetoes(levels: Sequence[Level | None]) -> tuple[str, ...]:
    """Why a pair may not merge without a person, however high it scores: a fact one person's
    records do not differ in (birth date, generational suffix), or a different given name at
    one home (two members of one family, whatever else the home explains)."""
    reasons: list[str] = []
    if levels[_DOB] == "different":
        reasons.append("different date of birth")
    if levels[_GENERATION] == "different":
        reasons.append("different generational suffix")
    if levels[_FIRST] == "different" and shared_home(levels):
        reasons.append("different first name at one home")
    return tuple(reasons)


@dataclass(frozen=True)
class Evaluation:
    """A pair's field levels and weights, before the explanation is written."""

    low_id: str
    high_id: str
    levels: tuple[Level | None, ...]
    weights: tuple[float, ...]
    counts: tuple[int, ...]
    score: float
    evidence: str = "name"


_Tables = tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]


def _log_tables(priors: Sequence[FieldPrior]) -> _Tables:
    """log2 of P(exact), P(similar) and P(differ) per field, as the scorer adds them."""
    return (
        tuple(math.log2(p.exact) for p in priors),
        tuple(math.log2(max(p.similar, 0.01)) for p in priors),
        tuple(math.log2(p.differ) if p.disagreement_counts else 0.0 for p in priors),
    )


_LOG_EXACT, _LOG_SIMILAR, _DIFFER = _log_tables(_PRIORS)
_SPREAD = tuple(p.spread for p in _PRIORS)
_LOG2 = math.log2
_LOG_SAME_DOMAIN_DIFFER = math.log2(SAME_DOMAIN_DIFFER)
_IDENTIFIERS = (_EMAIL, _PHONE, _COMPANY, _DOMAIN)


def pair_context(levels: Sequence[Level | None], av: Sequence[str], bv: Sequence[str]) -> Context:
    """The context two records come from (``Context``), from their levels and values: one home
    first (its address or landline holds one context), then any identifier that agrees (one
    context), then identifiers on both that all differ (other contexts)."""
    if shared_home(levels):
        return "home"
    differs = False
    for i in _IDENTIFIERS:
        level = levels[i]
        if level == "different":
            differs = True
        elif level is not None:
            return "one"
    if differs:
        return "other"
    if any(av[i] or bv[i] for i in _IDENTIFIERS):
        return "unknown"
    return "one"  # a person register: no record holds a contact identifier


def _one_context_change(weights: list[float]) -> float:
    """Records of two contexts (``pair_context`` "other") differ on every identifier both hold
    for one reason: a job change or a work record beside a personal one moves the mailbox, the
    phone and the employer together. Counted each on its own, the one fact weighed two or
    three times: a work and a personal record of one full name scored 4 to 5 bits against,
    while two people differ on them anyway. The strongest difference stands for the move; the
    others weigh nothing. Sets their weights to 0 and returns the weight taken off (negative)."""
    against = [i for i in _IDENTIFIERS if weights[i] < 0.0]
    if len(against) < 2:
        return 0.0
    strongest = min(against, key=weights.__getitem__)
    taken = 0.0
    for i in against:
        if i != strongest:
            taken += weights[i]
            weights[i] = 0.0
    return taken


def _swap_names(av: Sequence[str], bv: Sequence[str], levels: list[Level | None]) -> None:
    """First and last name entered the other way round count as agreement on both: when the
    crossed reading has more exact names than the straight one, or when both names differ as
    entered and both agree crossed (a typo in either, "smyth jon" for "john smith"). When both
    differ as entered and only one agrees crossed, the other was changed too
    (``_one_name_crossed``)."""
    if levels[_FIRST] == "exact" and levels[_LAST] == "exact":
        return
    a_first, a_last, b_first, b_last = av[_FIRST], av[_LAST], bv[_FIRST], bv[_LAST]
    cross_one = _name_level(a_first, b_last) if a_first and b_last else "different"
    cross_two = _name_level(a_last, b_first) if a_last and b_first else "different"
    if cross_one == "different" and cross_two == "different":
        return
    if levels[_FIRST] == "different" and levels[_LAST] == "different":
        if cross_one != "different" and cross_two != "different":
            levels[_FIRST] = levels[_LAST] = "swapped"
        else:
            _one_name_crossed(levels)
        return
    if cross_one == "different" or cross_two == "different":
        return
    straight = (levels[_FIRST] == "exact") + (levels[_LAST] == "exact")
    crossed = (cross_one == "exact") + (cross_two == "exact")
    if crossed > straight:
        levels[_FIRST] = levels[_LAST] = "swapped"


def _one_name_crossed(levels: list[Level | None]) -> None:
    """Both names differ as entered, and one record's given name is the other's surname (or
    the other way round): the names were entered in each other's fields and one of them was
    also mistyped past recognition or replaced: a form filled in twice goes wrong in more
    than one way at once. Febrl's data set generator makes duplicates so, with up to a
    maximal number of modifications per record, "swap two fields" among them (Febrl 0.3
    manual, "12.2 Data Set Generator Program 'generate.py'",
    http://users.cecs.anu.edu.au/~Peter.Christen/Febrl/febrl-0.3/febrldoc-0.3/node70.html).
    Read straight, such a pair differs on both names, the strongest evidence against short
    of a birth date. The crossed name counts as a swapped agreement, on the larger of its
    counts as either name (a name common as either counts as common), and the given name as
    different, so "different first name at one home" still keeps such a pair from merging
    without a person. Measured, FEBRL3 holds 158 such true pairs among dm's candidates and no
    false one."""
    levels[_LAST] = "swapped"


def field_levels(av: Sequence[str], bv: Sequence[str]) -> list[Level | None]:
    """Each field's level for two profiles' values (``Profile.values()``): None where either
    lacks the field; names entered the other way round count as swapped, the same mailbox
    leaves its domain uncompared (it already says the same domain), and a number in ``phone``
    on one record and ``mobilephone`` on the other is the same mobile (``_crossed_phone``)."""
    levels: list[Level | None] = [None] * len(FIELDS)
    for i, compare in enumerate(_COMPARE):
        x, y = av[i], bv[i]
        if x and y:
            levels[i] = compare(x, y)
    _swap_names(av, bv, levels)
    if levels[_EMAIL] == "exact":
        levels[_DOMAIN] = None
    if levels[_MOBILE] != "exact" and levels[_PHONE] != "exact" and _crossed_phone(av, bv):
        levels[_MOBILE], levels[_PHONE] = "exact", None
    return levels


def different_people(av: Sequence[str], bv: Sequence[str]) -> bool:
    """Whether two profiles' values (``Profile.values()``) are two people as far as their names
    and birth dates tell: both names on both, different as entered and crossed
    (``_swap_names``), and birth dates that do not agree. The pairs ``dependence`` counts."""
    a_first, a_last, b_first, b_last = av[_FIRST], av[_LAST], bv[_FIRST], bv[_LAST]
    if not (a_first and a_last and b_first and b_last):
        return False
    for x, y in ((a_last, b_last), (a_first, b_last), (a_last, b_first)):
        if _name_level(x, y) != "different":
            return False
    if _first_level(a_first, b_first) != "different":
        return False
    return not (av[_DOB] and bv[_DOB] and _dob_level(av[_DOB], bv[_DOB]) != "different")


def _crossed_phone(av: Sequence[str], bv: Sequence[str]) -> bool:
    """One record's ``phone`` is the other's ``mobilephone``: a mobile typed into the phone
    field (many forms ask for one number). It counts as the same mobile."""
    return bool(av[_PHONE] and av[_PHONE] == bv[_MOBILE]) or bool(
        av[_MOBILE] and av[_MOBILE] == bv[_PHONE]
    )


def _crossed_count(
    av: Sequence[str], bv: Sequence[str], a_counts: Sequence[int], b_counts: Sequence[int]
) -> int:
    """Contacts holding a crossed number (``_crossed_phone``), in either field."""
    if av[_PHONE] and av[_PHONE] == bv[_MOBILE]:
        return a_counts[_PHONE] + b_counts[_MOBILE]
    return a_counts[_MOBILE] + b_counts[_PHONE]


class Scorer:
    """Scores pairs of profiles from their field counts over ``total`` contacts."""

    def __init__(
        self,
        total: int,
        thresholds: Thresholds | Bands,
        baseline_bits: float,
        contexts: Mapping[Context, Mapping[str, FieldPrior]] | None = None,
        explained: Explained = DOCUMENTED,
    ) -> None:
        """``contexts`` overrides ``CONTEXT_PRIORS`` with this CRM's own counts
        (``contexts.context_priors``), ``explained`` the documented dependence of places and
        surnames at one home (``dependence.explained_by``)."""
        if total < 2:
            raise ValueError("scoring needs at least two contacts")
        self.total = total
        self.bands = thresholds if isinstance(thresholds, Bands) else Bands(thresholds)
        self.baseline = baseline_bits
        self.explained = explained
        self._tables: dict[Context, _Tables] = {"one": (_LOG_EXACT, _LOG_SIMILAR, _DIFFER)}
        for context, documented in CONTEXT_PRIORS.items():
            priors = {**documented, **(contexts or {}).get(context, {})}
            self._tables[context] = _log_tables(
                [priors.get(name, prior) for name, prior in zip(FIELDS, _PRIORS, strict=True)]
            )
        # What a full name would weigh if housemates of one name were its only way to recur.
        self._housemates_weight = (
            _LOG_EXACT[_FIRST] + _LOG_EXACT[_LAST] - math.log2(GENERATION_SHARE * HOUSEMATES / total)
        )

    def evaluate(
        self,
        a_id: str,
        av: Sequence[str],
        a_counts: Sequence[int],
        b_id: str,
        bv: Sequence[str],
        b_counts: Sequence[int],
    ) -> Evaluation:
        """Levels, weights and score of two profiles' values (``Profile.values()``) and counts,
        order-free. Cheap enough for every candidate pair; ``finish`` adds the terms and the
        explanation. An agreement on a value held by ``count`` of ``total`` contacts weighs
        ``log2(m / max(count/total, floor))``, a similar one ``log2(m_similar / (spread *
        share))``, neither below 0; a difference ``log2(P(differ | same person))``."""
        if b_id < a_id:
            a_id, av, a_counts, b_id, bv, b_counts = b_id, bv, b_counts, a_id, av, a_counts
        levels = field_levels(av, bv)
        top = [x if x > y else y for x, y in zip(a_counts, b_counts, strict=True)]
        if levels[_MOBILE] == "exact" and av[_MOBILE] != bv[_MOBILE]:  # crossed fields
            top[_MOBILE] = _crossed_count(av, bv, a_counts, b_counts)
        floors = implied_floors(
            levels,
            av[_EMAIL],
            top,
            suffixed=bool(av[_GENERATION] or bv[_GENERATION]),
            measured=self.explained,
        )
        weights = [0.0] * len(FIELDS)
        counts = [0] * len(FIELDS)
        total = self.total
        score = self.baseline
        context = pair_context(levels, av, bv)
        log_exact, log_similar, differ = self._tables[context]
        for i, level in enumerate(levels):
            if level is None:
                continue
            if level == "different":
                weight = differ[i]
                if i == _EMAIL and _same_org_domain(av[i], bv[i]):
                    weight = _LOG_SAME_DOMAIN_DIFFER
            else:
                count = top[i]
                if level == "swapped":
                    other = _LAST if i == _FIRST else _FIRST
                    count = max(count, a_counts[other], b_counts[other])
                counts[i] = count
                share = (count or 1) / total
                floor = floors.get(i, 0.0)
                if share < floor:
                    share = floor
                if level == "similar" and i == _FIRST and nickname_related(av[i], bv[i]):
                    if len(av[i]) == 1 or len(bv[i]) == 1:
                        share = share if share > INITIAL_SHARE else INITIAL_SHARE
                    weight = log_similar[i] - _LOG2(share)  # a name's own form: no spread
                    if weight < 0.0:
                        weight = 0.0
                elif level == "similar":
                    wide = _SPREAD[i] * share
                    weight = log_similar[i] - _LOG2(wide if wide < 0.5 else 0.5)
                    if weight < 0.0:
                        weight = 0.0
                else:  # an agreement is never evidence against, however common
                    weight = log_exact[i] - _LOG2(share)
                    if weight < 0.0:
                        weight = 0.0
            weights[i] = weight
            score += weight
        if context == "other":
            score -= _one_context_change(weights)
        if levels[_FIRST] in _NAMED and levels[_LAST] in _NAMED:
            # Namesakes by chance and housemates of one name add up (``HOUSEMATES``).
            both = weights[_FIRST] + weights[_LAST]
            excess = min(both, both + _LOG2(2.0**-both + 2.0**-self._housemates_weight))
            if excess > 0.0:
                from_first = min(excess, weights[_FIRST])
                weights[_FIRST] -= from_first
                weights[_LAST] -= excess - from_first
                score -= excess
        return Evaluation(
            a_id, b_id, tuple(levels), tuple(weights), tuple(counts), score,
            evidence_class(levels, av[_EMAIL]),
        )

    def finish(self, ev: Evaluation) -> ScoredPair:
        """The evidence terms, the reasons against, the band and the one-line explanation."""
        terms = [
            Term(
                FIELDS[i],
                level != "different",
                level,
                ev.counts[i] / self.total,
                ev.weights[i],
            )
            for i, level in enumerate(ev.levels)
            if level is not None
        ]
        terms.sort(key=lambda t: (-abs(t.weight), t.field))
        against = tuple(
            Against(f"different {LABELS[t.field]}", -t.weight) for t in terms if t.weight < 0
        )
        band = self.bands.for_evidence(ev.evidence).band(ev.score)
        explanation = explain(terms, self.total)
        vetoes = automatic_vetoes(ev.levels)
        if band == "automatic" and vetoes:
            band = "propose"
            explanation += f" (not merged automatically: {vetoes[0]})"
        return ScoredPair(
            pair_key=pair_key(ev.low_id, ev.high_id),
            low_id=ev.low_id,
            high_id=ev.high_id,
            score=ev.score,
            baseline=self.baseline,
            terms=tuple(terms),
            against=against,
            band=band,
            explanation=explanation,
            evidence=ev.evidence,
        )

    def score(
        self, a: Profile, a_counts: Sequence[int], b: Profile, b_counts: Sequence[int]
    ) -> ScoredPair:
        """The full evidence for two profiles: ``finish(evaluate(...))``."""
        ev = self.evaluate(a.id, a.values(), a_counts, b.id, b.values(), b_counts)
        return self.finish(ev)


# Explanation ------------------------------------------------------------------------------


def _phrase(
    term: Term, total: int, *, both_swapped: bool = True, street_agrees: bool = True
) -> str:
    label = LABELS[term.field]
    if term.field == "house" and term.agreed and not street_agrees:
        label = "house number"  # on another street, or none on one side: not one address
    if term.level == "different":
        return f"different {label}"
    if term.level == "swapped":
        return "first and last name swapped" if both_swapped else "a name in the other name field"
    if term.level == "similar":
        return f"similar {label}"
    holders = round(term.rarity * total)
    if term.field in ("first", "last", "company", "city"):
        if holders <= max(3, total // 5000):
            return f"same rare {label}"
        if term.rarity >= 0.01:
            return f"same common {label}"
    elif holders > 2 and term.field in ("phone", "email", "domain"):
        return f"same {label} (shared by {holders} contacts)"
    return f"same {label}"


def explain(terms: Sequence[Term], total: int, *, most: int = 3) -> str:
    """One line a person reads in four seconds: the strongest pieces of evidence, both ways."""
    phrases: list[str] = []
    both_swapped = sum(t.level == "swapped" for t in terms) == 2  # else ``_one_name_crossed``
    street_agrees = any(t.field == "street" and t.agreed for t in terms)
    for term in terms:  # already strongest first
        phrase = _phrase(term, total, both_swapped=both_swapped, street_agrees=street_agrees)
        if phrase not in phrases:
            phrases.append(phrase)
        if len(phrases) == most:
            break
    return ", ".join(phrases) if phrases else "no field to compare"
