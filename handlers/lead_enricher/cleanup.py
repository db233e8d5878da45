"""Deterministic field cleanup: the rules every value must pass, model-proposed or not.

Email lowercased and validated, phone to E.164 in the lead's country (else the configured
default region), both by the shared checks in ``handlers.common.emails`` / ``phones``; names split and
cased; country to ISO alpha-2. What the rules cannot decide is reported as *ambiguous* (with
the original text) for the model, and the same rules then judge the model's answer
(``normalize_model``). Nothing here calls AWS or a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from handlers.common.emails import normalise_email
from handlers.common.phones import phone_e164 as phone_e164  # re-exported for ler's modules
from handlers.common.phones import phone_region as phone_region
from handlers.lead_enricher.countries import country_code
from handlers.lead_enricher.lead import Contact

_DOMAIN = re.compile(r"^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
clean_email = normalise_email
"""ler's name for the shared email check (lowercased, trimmed, ``mailto:``-free, or None)."""
HONORIFICS = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame", "rev"})
PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "da", "di", "du", "la", "le", "del", "della", "bin", "ter"}
)
COMPANY_SUFFIXES = frozenset(
    {"ltd", "limited", "inc", "llc", "llp", "plc", "gmbh", "corp", "co", "bv", "sa", "sarl", "ag"}
)
_NAME_SEPARATORS = re.compile(r"\s[-/|&]\s|[()|/@]|\band\b", re.IGNORECASE)


@dataclass
class Cleanup:
    """The contact the rules produced, what they dropped, and what they could not decide.

    Attributes:
        contact: Every value that passed the rules.
        flags: Notes for the record (``email_invalid``, ``country_from_phone``...).
        ambiguous: Field -> original text the model may resolve (``name``, ``phone``,
            ``country``).
    """

    contact: Contact
    flags: list[str] = field(default_factory=list)
    ambiguous: dict[str, str] = field(default_factory=dict)


def clean_domain(text: str) -> str | None:
    """The bare host of a website (``https://www.Acme.co.uk/about`` -> ``acme.co.uk``)."""
    value = text.strip().lower()
    value = re.sub(r"^[a-z][a-z0-9+.-]*://", "", value).split("/")[0].split("?")[0]
    value = value.split("@")[-1].split(":")[0].removeprefix("www.")
    return value if _DOMAIN.match(value) else None


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def smart_case(word: str) -> str:
    """``o'neil`` -> ``O'Neil``, ``mcdonald`` -> ``McDonald``; mixed case is left alone."""
    if not word or (not word.isupper() and not word.islower()):
        return word
    if "-" in word:
        return "-".join(smart_case(part) for part in word.split("-"))
    lower = word.lower()
    if "'" in lower:
        head, _, tail = lower.partition("'")
        return f"{head.capitalize()}'{smart_case(tail)}" if tail else head.capitalize() + "'"
    if lower.startswith("mc") and len(lower) > 3:
        return "Mc" + lower[2:].capitalize()
    return lower.capitalize()


def case_name(tokens: list[str], *, surname: bool = False) -> str:
    """Cased name tokens; particles (van, de...) stay lower case except leading a given name."""
    cased = []
    for index, token in enumerate(tokens):
        if (surname or index > 0) and token.lower() in PARTICLES:
            cased.append(token.lower())
        else:
            cased.append(smart_case(token))
    return " ".join(cased)


def name_tokens(text: str) -> list[str]:
    """Words of a name without honorifics and stray punctuation."""
    words = [w.strip('.,;:"()') for w in text.split()]
    return [
        w
        for w in words
        if any(ch.isalpha() for ch in w) and w.lower().rstrip(".") not in HONORIFICS
    ]


def split_name(text: str) -> tuple[str | None, str | None, bool]:
    """(first, last, ambiguous) from one free-text name.

    ``Doe, Jane`` is surname-first; ``Jane van der Berg`` keeps the particles in the surname.
    More than four words, a company suffix, separators or "and" make it ambiguous: the best
    guess is still returned, and the model may refine it within the same words.
    """
    if any(ch.isdigit() for ch in text) or "@" in text:
        return None, None, False
    separator = _NAME_SEPARATORS.search(text)
    ambiguous = separator is not None
    if separator is not None and separator.start() > 0:
        # "Jane Doe - Acme Ltd": the best guess is the part before the separator.
        text = text[: separator.start()]
    if text.count(",") == 1 and not ambiguous:
        last_part, first_part = (p.strip() for p in text.split(","))
        first_tokens, last_tokens = name_tokens(first_part), name_tokens(last_part)
        if first_tokens and last_tokens:
            return case_name(first_tokens), case_name(last_tokens, surname=True), False
    tokens = name_tokens(text)
    if not tokens:
        return None, None, False
    lowered = {t.lower().rstrip(".") for t in tokens}
    ambiguous = ambiguous or len(tokens) > 4 or bool(lowered & COMPANY_SUFFIXES)
    if len(tokens) == 1:
        return case_name(tokens), None, ambiguous
    return case_name(tokens[:1]), case_name(tokens[1:], surname=True), ambiguous


def clean(fields: dict[str, str], *, default_region: str) -> Cleanup:
    """Apply every deterministic rule to a lead's raw fields."""
    result = Cleanup(Contact())
    contact = result.contact

    email_text = fields.get("email", "")
    if email_text:
        contact.email = clean_email(email_text)
        if contact.email is None:
            result.flags.append("email_invalid")

    country_text = fields.get("country", "")
    if country_text:
        contact.country = country_code(country_text)
        if contact.country is None:
            result.ambiguous["country"] = country_text

    phone_text = fields.get("phone", "")
    if phone_text:
        contact.phone = phone_e164(phone_text, contact.country or default_region)
        if contact.phone is None:
            digits = _digits(phone_text)
            international = phone_text.strip().startswith(("+", "00"))
            if 7 <= len(digits) <= 15 and not international:
                result.ambiguous["phone"] = phone_text
            else:
                result.flags.append("phone_invalid")
    if contact.country is None and contact.phone and "country" not in result.ambiguous:
        contact.country = phone_region(contact.phone)
        if contact.country:
            result.flags.append("country_from_phone")

    first, last = fields.get("first_name", ""), fields.get("last_name", "")
    if first or last:
        contact.first_name = case_name(name_tokens(first)) or None
        contact.last_name = case_name(name_tokens(last), surname=True) or None
    elif fields.get("name"):
        contact.first_name, contact.last_name, ambiguous = split_name(fields["name"])
        if ambiguous:
            result.ambiguous["name"] = fields["name"]
        elif contact.first_name is None:
            result.flags.append("name_invalid")

    company = " ".join(fields.get("company", "").split())
    contact.company = company or None
    title = " ".join(fields.get("job_title", "").split())
    contact.job_title = title or None
    if fields.get("website"):
        contact.website = clean_domain(fields["website"])
    return result
