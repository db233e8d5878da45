"""The one line a reviewer reads: a pair's strongest pieces of evidence, both ways, in words."""

from __future__ import annotations

from collections.abc import Sequence

from handlers.duplicate_merger.terms import Term

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
