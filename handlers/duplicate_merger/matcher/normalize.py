"""Field normalisation: the same person typed twice should give the same values here.

Each function takes what a CRM holds (any case, spacing, punctuation, format) and returns a
canonical string, or "" when nothing usable is left. Nothing here is fuzzy: fuzziness belongs to
the comparison step, so that blocking keys and rarity counts stay exact and reproducible.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import us
from nicknames import name_triplets

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_NON_ALPHA = re.compile(r"[^a-z]+")
_DIGITS = re.compile(r"\D+")
_SPACES = re.compile(r"\s+")
_NOT_PLAIN_PHONE = re.compile(r"[^\d\s().+-]")

@lru_cache(maxsize=1)
def nickname_graph() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """Many-to-many given-name relations from the ``nicknames`` package (carltonnorthern's
    hand-curated names.csv, Apache-2.0): each name's directly related names, and each
    nickname's formal names.

    Many-to-many, so "jon" relates to both John and Jonathan, and "chris" to Christopher,
    Christine and Christian; a one-way map would lose one side of each. Blocking reads it
    here (``blocking_given``), comparison in ``levels.nickname_related``.
    """
    related: dict[str, set[str]] = {}
    formal: dict[str, set[str]] = {}
    for triplet in name_triplets():
        full, nick = triplet.name1, triplet.name2
        if full == nick or not full.isalpha() or not nick.isalpha():
            continue
        related.setdefault(full, set()).add(nick)
        related.setdefault(nick, set()).add(full)
        formal.setdefault(nick, set()).add(full)
    return (
        {k: frozenset(v) for k, v in related.items()},
        {k: frozenset(v) for k, v in formal.items()},
    )


@lru_cache(maxsize=65_536)
def blocking_given(first: str) -> str:
    """The form a given name is blocked under: a nickname's formal name ("peggy" -> margaret).
    A formal name is longer than its nickname: the data set also lists "robert" under "bob"
    and "bill", and read as their nickname Robert blocked under B, apart from "R." and
    "Rob"."""
    if not first:
        return ""
    formal = [f for f in nickname_graph()[1].get(first, ()) if len(f) > len(first)]
    if not formal or any(f[0] == first[0] for f in formal):
        return first  # the initial, all blocking uses, is the same
    return min(formal)


ROLE_MAILBOXES = frozenset(
    ["info", "sales", "office", "contact", "hello", "support", "admin", "accounts", "team",
     "billing", "enquiries", "inquiries", "help", "marketing", "hr", "jobs", "careers", "mail",
     "reception", "orders", "service", "noreply", "no-reply", "webmaster", "finance", "press"]
)
"""Mailbox names that belong to a function, not a person (RFC 2142 lists several): an
agreement on one is explained by the organisation, as a shared office address is."""


def is_role_mailbox(address: str) -> bool:
    """Whether a normalised address is a function's mailbox (``info@``, ``sales@``...)."""
    return address.partition("@")[0] in ROLE_MAILBOXES


FREE_MAIL_DOMAINS = frozenset(
    ["gmail.com", "googlemail.com", "yahoo.com", "yahoo.co.uk", "yahoo.fr", "ymail.com", "hotmail.com", "hotmail.co.uk", "hotmail.fr", "outlook.com", "live.com", "live.co.uk", "msn.com", "aol.com", "icloud.com", "me.com", "mac.com", "proton.me", "protonmail.com", "gmx.com", "gmx.de", "gmx.net", "mail.com", "yandex.com", "yandex.ru", "zoho.com", "fastmail.com", "hey.com", "btinternet.com", "sky.com", "comcast.net", "verizon.net", "att.net", "qq.com", "163.com", "web.de", "orange.fr", "free.fr"]
)

_LEGAL_WORDS = frozenset(
    ["inc", "incorporated", "llc", "llp", "ltd", "limited", "plc", "gmbh", "ag", "co", "corp", "corporation", "company", "the", "sa", "sas", "sarl", "bv", "nv", "pty", "pte", "oy", "ab", "as", "kk", "group", "holdings"]
)

_STREET_WORDS = {
    "st": "street",
    "str": "street",
    "rd": "road",
    "ave": "avenue",
    "av": "avenue",
    "dr": "drive",
    "cres": "crescent",
    "cr": "crescent",
    "pl": "place",
    "ct": "court",
    "crt": "court",
    "ln": "lane",
    "blvd": "boulevard",
    "hwy": "highway",
    "pde": "parade",
    "tce": "terrace",
    "cct": "circuit",
    "cl": "close",
    "sq": "square",
    "pkwy": "parkway",
}


def fold(text: str) -> str:
    """Lower case, accents removed (é -> e), whitespace collapsed, ends trimmed."""
    if text.isascii():
        # ASCII is its own NFKD form and has no combining marks, and ``str.split()`` splits
        # on exactly the characters ``\s`` matches (``str.isspace``): the slow path's result.
        return " ".join(text.lower().split())
    return _fold_unicode(text)


def _fold_unicode(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACES.sub(" ", plain.lower()).strip()


def name(text: str | None) -> str:
    """A personal name as lower-case letters and single spaces ("O'Neil-Smith" -> "oneil smith")."""
    if not text:
        return ""
    words = [_NON_ALPHA.sub("", w) for w in fold(text).replace("-", " ").split()]
    return " ".join(w for w in words if w)


GENERATIONS = {"jr": "jr", "junior": "jr", "sr": "sr", "senior": "sr", "ii": "ii", "2nd": "ii",
               "iii": "iii", "3rd": "iii", "iv": "iv", "4th": "iv", "v": "v"}
"""Generational suffixes as typed after a surname ("Smith Jr.", "Smith, III"), in one form."""


def surname_and_generation(text: str | None) -> tuple[str, str]:
    """(surname, generational suffix) from a surname field: "Smith Jr." -> ("smith", "jr").

    A CRM has no suffix field of its own, so the suffix is typed into the surname; left there
    it would make "smith jr" look like a similar surname to "smith", when it says the record
    is one of two people of one family with one name. Only a last word after at least one
    other word counts ("Iv" alone is a surname)."""
    words = name((text or "").replace(",", " ").replace(".", " ")).split()
    if len(words) >= 2 and words[-1] in GENERATIONS:
        return " ".join(words[:-1]), GENERATIONS[words[-1]]
    return " ".join(words), ""


def given_name(text: str | None) -> str:
    """A given name, its first word only, as typed ("A." -> "a"); nicknames are related at
    comparison time (``levels.nickname_related``), not rewritten here."""
    words = name(text).split()
    return words[0] if words else ""


def email(text: str | None) -> str:
    """An address as the mailbox it reaches: lower case, ``+tag`` dropped, Gmail dots dropped."""
    if not text:
        return ""
    value = fold(text).replace(" ", "").strip("<>\"'")
    local, at, domain = value.rpartition("@")
    if not at or not local or "." not in domain:
        return ""
    local = local.split("+", 1)[0]
    if domain in ("gmail.com", "googlemail.com"):
        local, domain = local.replace(".", ""), "gmail.com"
    return f"{local}@{domain}" if local else ""


def email_domain(address: str) -> str:
    """The organisation's domain of a normalised address; "" for free-mail providers."""
    return organisation_domain(address.rpartition("@")[2])


def organisation_domain(domain: str) -> str:
    """A mail domain, or "" when it is a free-mail provider's (or empty)."""
    return "" if not domain or domain in FREE_MAIL_DOMAINS else domain


def phone(text: str | None, default_region: str = "US") -> str:
    """E.164 (``+14155550132``) or "" when the text is not a plausible phone number.

    Plain North-American formats take a fast path (most of a US CRM); anything else goes
    through the shared normaliser (``handlers.common.phones``), which knows
    every country's trunk prefixes.
    """
    if not text:
        return ""
    raw = text.strip()
    digits = _DIGITS.sub("", raw)
    if not 6 <= len(digits) <= 17 or is_placeholder_phone(digits):
        return ""
    plain = not _NOT_PLAIN_PHONE.search(raw) and "(0)" not in raw
    if plain and default_region in ("US", "CA"):
        if raw.startswith("+1") or (not raw.startswith("+") and len(digits) == 11):
            if len(digits) == 11 and digits[0] == "1":
                return "+" + digits
        elif not raw.startswith(("+", "00")) and len(digits) == 10:
            return "+1" + digits
    return _phone_slow(raw, default_region)


def is_placeholder_phone(digits: str) -> bool:
    """Numbers typed to fill a required field: one digit repeated (555-555-5555,
    000-000-0000) or a run (123-456-7890). NANP's fictional 555-01XX range is left alone:
    examples and tests use it as real numbers. Numbers many contacts share are caught by
    their count instead (``weights.SHARED_HOLDERS``)."""
    national = digits[1:] if len(digits) == 11 and digits[0] == "1" else digits
    if len(set(national)) <= 1 or national in ("5555555555", "1234567890", "0123456789"):
        return True
    return national in "01234567890123456789" or national in "98765432109876543210"


def _phone_slow(raw: str, default_region: str) -> str:
    try:
        # phonenumbers is vendored into dm-block, which reads raw numbers; dm-score and
        # dm-merge see numbers dm-block already normalised and ship without it.
        import phonenumbers  # noqa: F401

        from handlers.common.phones import phone_e164
    except ImportError:  # pragma: no cover - vendored in dm-block, installed in dev
        digits = _DIGITS.sub("", raw)
        return "+" + digits if raw.startswith("+") else ""
    # A possible number is enough to compare two records of one person (not an SMS target).
    return phone_e164(raw, default_region, valid=False) or ""


def company(text: str | None) -> str:
    """An organisation name without punctuation or legal form ("ACME, Inc." -> "acme")."""
    if not text:
        return ""
    words = _NON_ALNUM.sub(" ", fold(text).replace("&", " and ")).split()
    kept = [w for w in words if w not in _LEGAL_WORDS]
    return " ".join(kept or words)


def website_domain(text: str | None) -> str:
    """The host of a website field without scheme, ``www.`` or path ("" if none)."""
    if not text:
        return ""
    host = fold(text).split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0]
    host = host.removeprefix("www.").strip(".")
    return host if "." in host else ""


def street(text: str | None) -> tuple[str, str]:
    """(house number, street) from an address line ("12b Main St." -> ("12b", "main street"))."""
    if not text:
        return "", ""
    words = _NON_ALNUM.sub(" ", fold(text)).split()
    house = ""
    if words and any(ch.isdigit() for ch in words[0]):
        house = words.pop(0)
    return house, " ".join(_STREET_WORDS.get(w, w) for w in words)


def postcode(text: str | None) -> str:
    """A postcode without spaces, upper case."""
    return _NON_ALNUM.sub("", fold(text or "")).upper()


def place(text: str | None) -> str:
    """A city or state name: folded, punctuation removed."""
    return " ".join(_NON_ALNUM.sub(" ", fold(text or "")).split())


@lru_cache(maxsize=1)
def _state_codes() -> dict[str, str]:
    """Each US state's and territory's name, as ``place`` folds it, to its postal code."""
    return {place(s.name): s.abbr.lower() for s in us.states.STATES_AND_TERRITORIES}


def state(text: str | None) -> str:
    """A state or region: its postal code where it is a US state's or territory's name
    ("Pennsylvania", "pennsylvania" -> "pa"), else as ``place`` folds it. A web form asks for
    the name, an import or a card holds the code; read apart, one state weighed as two (-3.3
    bits). Only whole names map, from ``us``'s table: a code stays as typed, so Australian
    codes ("wa", "sa") are never read as US ones, and a misspelt name is the comparison's
    (``levels``). Canadian provinces and UK counties keep their names: no small maintained
    table of them exists on PyPI (pycountry's ISO 3166-2 comes in a wheel of 21 MB unpacked,
    19.5 MB of it translations)."""
    folded = place(text)
    return _state_codes().get(folded, folded)


def birth_date(text: str | None) -> str:
    """``YYYYMMDD`` from ``YYYYMMDD``, ``YYYY-MM-DD`` or ``YYYY/MM/DD``; "" if not a date.

    Any year from 1000 is kept: a register of historical or genealogical records holds people
    born before 1850, and a date dropped here is evidence lost without a word (it was, before
    1850). A year of three digits or fewer ("0000", "0001") is a placeholder, not a date, and
    so is a month or day of "00". A month or day out of range ("1973-19-14") is a mistyped
    part of a real date and is kept as typed: dropped, a retyped month left its record without
    a date to compare (36 of RLdata10000's true pairs)."""
    if not text:
        return ""
    digits = _DIGITS.sub("", str(text))
    if len(digits) != 8:
        return ""
    year, month, day = int(digits[:4]), int(digits[4:6]), int(digits[6:])
    if not (1000 <= year <= 2100 and month and day):
        return ""
    return digits
