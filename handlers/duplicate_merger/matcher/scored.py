"""What scoring a pair leaves: each field's evidence (``Term``), the reasons against
(``Against``), the scored pair (``ScoredPair``) that dm-score writes and the pages show, its key
(``pair_key``: one row per pair of contacts, whichever way round they were found) and the one
line a reviewer reads (``explain``: a pair's strongest pieces of evidence, both ways, in words).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from handlers.duplicate_merger.matcher.bands import Band
from handlers.duplicate_merger.matcher.levels import Level


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


# The pair's key --------------------------------------------------------------------------

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


# The one line a reviewer reads ------------------------------------------------------------

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


GIVEN_FORMS = {"nickname": "first name as a nickname", "initial": "first name as an initial"}
"""How the line names a similar given name that is a nickname ("bob" for "robert") or an
initial ("r." for "robert") of the other: a reviewer reads why the names differ, not only
that they are close."""


def _phrase(
    term: Term,
    total: int,
    *,
    both_swapped: bool = True,
    street_agrees: bool = True,
    given_form: str = "",
) -> str:
    label = LABELS[term.field]
    if term.field == "house" and term.agreed and not street_agrees:
        label = "house number"  # on another street, or none on one side: not one address
    if term.level == "different":
        return f"different {label}"
    if term.level == "swapped":
        return "first and last name swapped" if both_swapped else "a name in the other name field"
    if term.level == "similar":
        if term.field == "first" and given_form in GIVEN_FORMS:
            return GIVEN_FORMS[given_form]
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


def explain(terms: Sequence[Term], total: int, *, most: int = 3, given_form: str = "") -> str:
    """One line a person reads in four seconds: the strongest pieces of evidence, both ways.
    ``given_form`` says how a similar given name differs (``GIVEN_FORMS``)."""
    phrases: list[str] = []
    both_swapped = sum(t.level == "swapped" for t in terms) == 2  # else ``_one_name_crossed``
    street_agrees = any(t.field == "street" and t.agreed for t in terms)
    for term in terms:  # already strongest first
        phrase = _phrase(
            term, total, both_swapped=both_swapped, street_agrees=street_agrees,
            given_form=given_form,
        )
        if phrase not in phrases:
            phrases.append(phrase)
        if len(phrases) == most:
            break
    return ", ".join(phrases) if phrases else "no field to compare"
