"""Field normalisation: the same person typed twice should give the same values here.

Each function takes what a CRM holds (any case, spacing, punctuation, format) and returns a
canonical string, or "" when nothing usable is left. Nothing here is fuzzy: fuzziness belongs to
the comparison step, so that blocking keys and rarity counts stay exact and reproducible.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_NON_ALPHA = re.compile(r"[^a-z]+")
_DIGITS = re.compile(r"\D+")
_SPACES = re.compile(r"\s+")

# Common English given-name diminutives, mapped to one canonical form so that "Bob Smith" and
# "Robert Smith" share a blocking key and agree on first name. Kept short on purpose: a wrong
# mapping joins two different people, a missing one only costs some recall. Names that are
# also common given names in their own right (Jack, Harry, Liam, Nathan, Lisa, Frank) are left
# alone; a diminutive of two names (Pat, Sam, Alex, Chris) maps to the first listed.
_NICKNAMES_TEXT = """
abigail: abby abbie gail
alexander: alex alec xander
alexandra: alexa lexi
andrew: andy drew
anthony: tony
barbara: barb barbie babs
benjamin: ben benny benji
catherine: cathy cath kate katie kathy cat katherine kathryn katharine
charles: charlie chuck chas chaz
christopher: chris kit topher
christine: christy
daniel: dan danny
david: dave davey
deborah: debbie deb debra
donald: don donnie
dorothy: dot dottie
edward: ed eddie ted ned
elizabeth: liz lizzie beth betty eliza libby elisabeth
emily: em emmy
frances: fran frankie
frederick: fred freddie
gregory: greg
harold: hal
henry: hank
isabella: bella izzy isabel
jacob: jake
james: jim jimmy jamie
jennifer: jen jenny
jessica: jess jessie
john: johnny jon
jonathan: jon jonny
joseph: joe joey
joshua: josh
kenneth: ken kenny
lawrence: larry laurence
leonard: leo len lenny
margaret: maggie meg peggy marge madge
matthew: matt
michael: mike mikey mick mickey
nathaniel: nate nat
nicholas: nick nicky
pamela: pam
patricia: pat patty trish tricia
patrick: paddy pat
peter: pete
philip: phil phillip
rebecca: becky becca
richard: rick ricky dick rich richie
robert: rob bob bobby robbie
ronald: ron ronnie
samantha: sam sammy
samuel: sam sammy
stephen: steve stevie steven
susan: sue susie suzanne
theodore: theo ted teddy
thomas: tom tommy
timothy: tim timmy
victoria: vicky tori
william: will bill billy willy
zachary: zach zack
"""


def _nickname_table(text: str) -> dict[str, str]:
    table: dict[str, str] = {}
    for line in text.strip().splitlines():
        canonical, _, variants = line.partition(":")
        for variant in variants.split():
            # The first canonical listed for an ambiguous diminutive wins (stable, documented).
            table.setdefault(variant, canonical.strip())
    return table


NICKNAMES = _nickname_table(_NICKNAMES_TEXT)

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


@lru_cache(maxsize=100_000)
def fold(text: str) -> str:
    """Lower case, accents removed (é -> e), whitespace collapsed, ends trimmed."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACES.sub(" ", plain.lower()).strip()


@lru_cache(maxsize=200_000)
def name(text: str | None) -> str:
    """A personal name as lower-case letters and single spaces ("O'Neil-Smith" -> "oneil smith")."""
    if not text:
        return ""
    words = [_NON_ALPHA.sub("", w) for w in fold(text).replace("-", " ").split()]
    return " ".join(w for w in words if w)


def given_name(text: str | None) -> str:
    """A given name, its first word only, diminutives mapped to one canonical form."""
    words = name(text).split()
    if not words:
        return ""
    first = words[0]
    return NICKNAMES.get(first, first)


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
    domain = address.rpartition("@")[2]
    return "" if not domain or domain in FREE_MAIL_DOMAINS else domain


@lru_cache(maxsize=100_000)
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
    if not 6 <= len(digits) <= 17:
        return ""
    plain = not re.search(r"[^\d\s().+-]", raw) and "(0)" not in raw
    if plain and default_region in ("US", "CA"):
        if raw.startswith("+1") or (not raw.startswith("+") and len(digits) == 11):
            if len(digits) == 11 and digits[0] == "1":
                return "+" + digits
        elif not raw.startswith(("+", "00")) and len(digits) == 10:
            return "+1" + digits
    return _phone_slow(raw, default_region)


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


@lru_cache(maxsize=100_000)
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


def birth_date(text: str | None) -> str:
    """``YYYYMMDD`` from ``YYYYMMDD``, ``YYYY-MM-DD`` or ``YYYY/MM/DD``; "" if not a date."""
    if not text:
        return ""
    digits = _DIGITS.sub("", str(text))
    if len(digits) != 8:
        return ""
    year, month, day = int(digits[:4]), int(digits[4:6]), int(digits[6:])
    if not (1850 <= year <= 2100 and 1 <= month <= 12 and 1 <= day <= 31):
        return ""
    return digits
