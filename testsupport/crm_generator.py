"""Seeded B2B CRM contacts with known duplicates and the hard negatives real CRMs hold.

For the benchmark, the tests and the sandbox; it is test support and never goes into a function
archive (it lives outside ``handlers/``). What it models, because each is a way a matcher goes
wrong on real CRM data:

* **Coworkers.** Most contacts work at a company. Coworkers share its office address (house
  number, street, postcode, city), its main phone line, its email domain and its mailbox
  pattern (``first.last@``); company sizes are heavy-tailed (a few employers hold hundreds of
  contacts).
* **Households.** People who live together share a surname (mostly), the home address and the
  landline; a few are junior and senior with the same first name (and a different birth date,
  where one is recorded); three records in ten of those carry "Jr." or "Sr." after the surname.
* **Mailboxes are unique**: two people never share a personal address (namesakes get
  ``john.smith7@`` and ``john.smith@``), as no provider gives one mailbox to two people.
* **Namesakes at realistic frequencies.** Given names and surnames are drawn from the US Census
  1990 frequency lists (``dist.male.first``, ``dist.female.first``, ``dist.all.last`` as
  shipped by the ``names`` package, MIT): "James Smith" recurs as often as it does in the US.
* **Role mailboxes** (``info@``, ``sales@``...) typed in place of a person's address,
  **placeholder phones** (555-555-5555...), missing emails and phones.
* **Duplicates** (about 14 % of records are in clusters of 2-4): re-entries with typos,
  nicknames, initials ("A."), swapped names, phone formats, ``+tags``, Gmail dots, upper case;
  a work record and a personal record of one person; **job changes** (new employer, new work
  mailbox, new office, same mobile); **moves** (new home address and landline).

Nicknames come from ``corp-names`` (MIT), which merges carltonnorthern/nicknames with two
other public-domain lists (onyxrev/common_nickname_csv, HaJongler/diminutives.db) into one
nickname -> canonical map. dm's own table is carltonnorthern's alone (the ``nicknames``
package), so the generator's variants are not drawn from the table the matcher reads: a
variant only the other lists know is a miss dm has to own.
"""

from __future__ import annotations

import importlib.resources
import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

# US cities with their state and a ZIP prefix (3 digits, the USPS sectional centre of the
# city), weighted by rough population rank.
_CITIES = (
    ("New York", "NY", "100"), ("Los Angeles", "CA", "900"), ("Chicago", "IL", "606"),
    ("Houston", "TX", "770"), ("Phoenix", "AZ", "850"), ("Philadelphia", "PA", "191"),
    ("San Antonio", "TX", "782"), ("San Diego", "CA", "921"), ("Dallas", "TX", "752"),
    ("Austin", "TX", "787"), ("Jacksonville", "FL", "322"), ("Columbus", "OH", "432"),
    ("Charlotte", "NC", "282"), ("Indianapolis", "IN", "462"), ("Seattle", "WA", "981"),
    ("Denver", "CO", "802"), ("Boston", "MA", "021"), ("Nashville", "TN", "372"),
    ("Portland", "OR", "972"), ("Las Vegas", "NV", "891"), ("Detroit", "MI", "482"),
    ("Memphis", "TN", "381"), ("Louisville", "KY", "402"), ("Baltimore", "MD", "212"),
    ("Milwaukee", "WI", "532"), ("Albuquerque", "NM", "871"), ("Tucson", "AZ", "857"),
    ("Fresno", "CA", "937"), ("Sacramento", "CA", "958"), ("Atlanta", "GA", "303"),
    ("Omaha", "NE", "681"), ("Raleigh", "NC", "276"), ("Miami", "FL", "331"),
    ("Minneapolis", "MN", "554"), ("Tulsa", "OK", "741"), ("Cleveland", "OH", "441"),
    ("Wichita", "KS", "672"), ("Tampa", "FL", "336"), ("Madison", "WI", "537"),
    ("Boise", "ID", "837"), ("Richmond", "VA", "232"), ("Spokane", "WA", "992"),
)
_CITY_WEIGHTS = list(itertools.accumulate(1.0 / (rank + 2) for rank in range(len(_CITIES))))

# The twenty most common US street names (US Census Bureau TIGER count, as published by the
# National League of Cities); the long tail is named after surnames and trees.
_STREETS = (
    "Second", "Third", "First", "Fourth", "Park", "Fifth", "Main", "Sixth", "Oak", "Seventh",
    "Pine", "Maple", "Cedar", "Eighth", "Elm", "View", "Washington", "Ninth", "Lake", "Hill",
)
_STREET_TYPES = (("Street", "St"), ("Avenue", "Ave"), ("Road", "Rd"), ("Drive", "Dr"),
                 ("Lane", "Ln"), ("Boulevard", "Blvd"), ("Court", "Ct"), ("Place", "Pl"))
_INDUSTRY = ("Labs", "Partners", "Systems", "Foods", "Dental", "Logistics", "Consulting",
             "Realty", "Health", "Software", "Media", "Supply", "Engineering", "Capital")
_LEGAL = ("Inc", "LLC", "Ltd", "Corp", "Co", "", "", "")
_TLDS = (".com", ".com", ".com", ".io", ".co", ".net")
_FREE = ("gmail.com", "gmail.com", "gmail.com", "yahoo.com", "hotmail.com", "outlook.com",
         "icloud.com", "aol.com")
ROLE_MAILBOXES = ("info", "sales", "office", "contact", "hello", "support", "admin",
                  "accounts", "team", "billing")
PLACEHOLDER_PHONES = ("555-555-5555", "000-000-0000", "(123) 456-7890", "999-999-9999",
                      "111-111-1111")
_PATTERNS = ("first.last", "first.last", "flast", "first", "firstl", "first_last")


@cache
def _census(filename: str) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Names and cumulative frequencies (percent) from a Census 1990 list in ``names``."""
    text = (importlib.resources.files("names") / filename).read_text(encoding="ascii")
    names: list[str] = []
    cumulative: list[float] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4:
            names.append(parts[0].lower())
            cumulative.append(float(parts[2]))
    return tuple(names), tuple(cumulative)


@cache
def nickname_variants() -> dict[str, tuple[str, ...]]:
    """Canonical given name -> its nicknames, from corp-names' merged map (not dm's table)."""
    data = json.loads(
        (importlib.resources.files("corp_names") / "data" / "nicknames.json").read_text("utf-8")
    )
    out: dict[str, list[str]] = {}
    for nick, entry in data.items():
        canonical = entry.get("canonical")
        if canonical and canonical != nick and nick.isalpha():
            out.setdefault(canonical, []).append(nick)
    return {k: tuple(sorted(v)) for k, v in out.items()}


@dataclass
class Generated:
    """Generated contacts: CRM properties by id, the person behind each id, and the truth.

    Attributes:
        contacts: ``(contact_id, properties)`` in generation order.
        entity_of: The person (entity id) each contact id belongs to.
        employer_of: The company index a contact's record lists (-1 for none).
        household_of: The household index of each contact's person.
    """

    contacts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    entity_of: dict[str, int] = field(default_factory=dict)
    employer_of: dict[str, int] = field(default_factory=dict)
    household_of: dict[str, int] = field(default_factory=dict)

    def true_pairs(self) -> set[tuple[str, str]]:
        """Every pair of contact ids of one person, as ``(min, max)``."""
        by_entity: dict[int, list[str]] = {}
        for contact_id, entity in self.entity_of.items():
            by_entity.setdefault(entity, []).append(contact_id)
        pairs: set[tuple[str, str]] = set()
        for ids in by_entity.values():
            ids.sort()
            for i, a in enumerate(ids):
                for b in ids[i + 1 :]:
                    pairs.add((a, b))
        return pairs


@dataclass
class _Company:
    name: str
    domain: str
    main_line: str
    house: str
    street: str
    city: int
    zip: str
    pattern: str
    mailboxes: set[str] = field(default_factory=set)


@dataclass
class _Home:
    house: str
    street: str
    city: int
    zip: str
    landline: str


@dataclass
class _Person:
    entity: int
    household: int
    first: str
    last: str
    female: bool
    mobile: str
    personal_email: str
    home: _Home
    employer: int
    work_email: str
    direct: str
    dob: str
    suffix: str = ""
    """Generational suffix ("Jr.", "Sr."), typed after the surname on some of the records."""


class _Maker:
    """The random choices of one generation run."""

    def __init__(self, seed: int, size: int) -> None:
        self.rng = random.Random(seed)  # noqa: S311 (seeded test data, no secret)
        self.last_names, self.last_cum = _census("dist.all.last")
        self.male, self.male_cum = _census("dist.male.first")
        self.female, self.female_cum = _census("dist.female.first")
        self.nicks = nickname_variants()
        n_companies = max(10, size // 9)
        # Heavy-tailed company sizes: weight 1/rank^0.9 (a few employers hold many contacts).
        self.company_cum = list(
            itertools.accumulate(1.0 / (rank + 1) ** 0.9 for rank in range(n_companies))
        )
        self.companies: list[_Company] = []
        self.domains: set[str] = set()
        self.personal_mailboxes: set[str] = set()
        self.company_range = range(n_companies)

    # Values ----------------------------------------------------------------------------

    def surname(self) -> str:
        return self.rng.choices(self.last_names, cum_weights=self.last_cum)[0]

    def given(self, female: bool) -> str:
        if female:
            return self.rng.choices(self.female, cum_weights=self.female_cum)[0]
        return self.rng.choices(self.male, cum_weights=self.male_cum)[0]

    def phone_digits(self, area: str | None = None) -> str:
        area = area or str(self.rng.randint(201, 989))
        return f"{area}{self.rng.randint(200, 999)}{self.rng.randint(0, 9999):04d}"

    def street(self) -> str:
        rng = self.rng
        base = rng.choice(_STREETS) if rng.random() < 0.5 else self.surname().capitalize()
        return f"{base} {rng.choice(_STREET_TYPES)[0]}"

    def city(self) -> int:
        return self.rng.choices(range(len(_CITIES)), cum_weights=_CITY_WEIGHTS)[0]

    def zip_in(self, city: int) -> str:
        return _CITIES[city][2] + f"{self.rng.randint(1, 99):02d}"

    def home(self) -> _Home:
        city = self.city()
        landline = self.phone_digits() if self.rng.random() < 0.35 else ""
        return _Home(str(self.rng.randint(1, 9999)), self.street(), city, self.zip_in(city),
                     landline)

    def company(self, index: int) -> _Company:
        while len(self.companies) <= index:
            rng = self.rng
            a = self.surname().capitalize()
            if rng.random() < 0.2:
                base = f"{a} & {self.surname().capitalize()}"
            else:
                base = f"{a} {rng.choice(_INDUSTRY)}"
            slug = base.lower().replace(" & ", "").replace(" ", "")
            domain = slug + rng.choice(_TLDS)
            while domain in self.domains:
                domain = slug + str(rng.randint(2, 99)) + rng.choice(_TLDS)
            self.domains.add(domain)
            city = self.city()
            name = f"{base} {rng.choice(_LEGAL)}".strip()
            self.companies.append(
                _Company(name, domain, self.phone_digits(), str(rng.randint(1, 2999)),
                         self.street(), city, self.zip_in(city), rng.choice(_PATTERNS))
            )
        return self.companies[index]

    def work_mailbox(self, company: _Company, first: str, last: str) -> str:
        last = last.replace("'", "").replace(" ", "")
        local = {
            "first.last": f"{first}.{last}",
            "flast": f"{first[0]}{last}",
            "first": first,
            "firstl": f"{first}{last[0]}",
            "first_last": f"{first}_{last}",
        }[company.pattern]
        candidate, n = local, 1
        while candidate in company.mailboxes:  # two John Smiths at one company
            n += 1
            candidate = f"{local}{n}"
        company.mailboxes.add(candidate)
        return f"{candidate}@{company.domain}"

    def personal_email(self, first: str, last: str) -> str:
        rng = self.rng
        last = last.replace("'", "").replace(" ", "")
        local = rng.choice((f"{first}.{last}", f"{first}{last}", f"{first[0]}{last}",
                            f"{first}{last[0]}", f"{last}.{first}"))
        if rng.random() < 0.6:
            local += str(rng.randint(1, 99) if rng.random() < 0.7 else rng.randint(1950, 2005))
        provider = rng.choice(_FREE)
        address = f"{local}@{provider}"
        while address.replace(".", "") in self.personal_mailboxes:  # a mailbox reaches one person
            address = f"{local}{rng.randint(1, 999)}@{provider}"
        self.personal_mailboxes.add(address.replace(".", ""))
        return address

    def dob(self) -> str:
        rng = self.rng
        if rng.random() >= 0.1:
            return ""
        return f"{rng.randint(1945, 2002)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"

    def person(self, entity: int, household: int, home: _Home, *, last: str | None = None,
               first: str | None = None, female: bool | None = None) -> _Person:
        rng = self.rng
        female = rng.random() < 0.5 if female is None else female
        first = first or self.given(female)
        last = last or self.surname()
        employed = rng.random() < 0.75
        employer = -1
        work = direct = ""
        if employed:
            employer = rng.choices(self.company_range, cum_weights=self.company_cum)[0]
            company = self.company(employer)
            work = self.work_mailbox(company, first, last)
            direct = self.phone_digits(company.main_line[:3]) if rng.random() < 0.3 else ""
        mobile = self.phone_digits() if rng.random() < 0.8 else ""
        return _Person(entity, household, first, last, female, mobile,
                       self.personal_email(first, last), home, employer, work, direct,
                       self.dob())

    # Records ---------------------------------------------------------------------------

    def record(self, p: _Person, view: str) -> tuple[dict[str, Any], int]:
        """One CRM record of ``p``: ``work`` (as a business contact) or ``personal``."""
        rng = self.rng
        props: dict[str, Any] = {"firstname": p.first.capitalize(), "lastname": _cap(p.last)}
        if p.suffix and rng.random() < 0.3:  # most records of a junior or senior omit it
            props["lastname"] += f" {p.suffix}"
        if view == "work" and p.employer >= 0:
            c = self.company(p.employer)
            roll = rng.random()
            if roll < 0.04:
                props["email"] = f"{rng.choice(ROLE_MAILBOXES)}@{c.domain}"
            elif roll < 0.10:
                props["email"] = ""
            else:
                props["email"] = p.work_email
            roll = rng.random()
            if roll < 0.45:
                props["phone"] = _fmt_phone(rng, c.main_line)
            elif roll < 0.65 and p.direct:
                props["phone"] = _fmt_phone(rng, p.direct)
            if p.mobile and rng.random() < 0.55:
                props["mobilephone"] = _fmt_phone(rng, p.mobile)
            if rng.random() < 0.92:
                props["company"] = c.name
            if rng.random() < 0.3:
                props["website"] = f"https://www.{c.domain}"
            if rng.random() < 0.6:
                props["address"] = f"{c.house} {c.street}"
                props["zip"] = c.zip
            city, state, _ = _CITIES[c.city]
            employer = p.employer
        else:
            h = p.home
            props["email"] = p.personal_email if rng.random() < 0.9 else ""
            if h.landline and rng.random() < 0.7:
                props["phone"] = _fmt_phone(rng, h.landline)
            if p.mobile and rng.random() < 0.85:
                props["mobilephone"] = _fmt_phone(rng, p.mobile)
            if rng.random() < 0.65:
                props["address"] = f"{h.house} {h.street}"
                props["zip"] = h.zip
            city, state, _ = _CITIES[h.city]
            employer = -1
        if rng.random() < 0.85:
            props["city"] = city
        props["state"] = state
        if p.dob:
            props["date_of_birth"] = p.dob
        if rng.random() < 0.02:
            props["phone"] = rng.choice(PLACEHOLDER_PHONES)
        return props, employer

    def noisy(self, props: dict[str, Any], p: _Person) -> dict[str, Any]:
        """The same record typed again: one to three of the ways CRM duplicates differ."""
        rng = self.rng
        dup = dict(props)
        for change in rng.sample(range(14), k=rng.choice((1, 1, 2, 2, 3))):
            first, last = dup["firstname"], dup["lastname"]
            if change == 0:
                dup["firstname"] = _typo(rng, first)
            elif change == 1:
                dup["lastname"] = _typo(rng, last)
            elif change in (2, 3) and self.nicks.get(p.first):
                dup["firstname"] = rng.choice(self.nicks[p.first]).capitalize()
            elif change == 4:
                dup["firstname"] = f"{first[0]}." if rng.random() < 0.7 else first[0]
            elif change == 5:
                dup["firstname"], dup["lastname"] = last, first
            elif change == 6:
                for key in ("phone", "mobilephone"):
                    digits = "".join(ch for ch in dup.get(key, "") if ch.isdigit())[-10:]
                    if len(digits) == 10:
                        dup[key] = _fmt_phone(rng, digits)
            elif change == 7 and "@" in dup.get("email", ""):
                local, domain = dup["email"].split("@")
                if domain == "gmail.com" and rng.random() < 0.5:
                    local = local.replace(".", "") if "." in local else local[:2] + "." + local[2:]
                else:
                    local = f"{local}+{rng.choice(('crm', 'news', 'work'))}"
                dup["email"] = f"{local}@{domain}"
            elif change == 8:
                dup["email"] = dup.get("email", "").upper() if rng.random() < 0.5 else ""
            elif change == 9:
                dup.pop("phone" if rng.random() < 0.5 else "mobilephone", None)
            elif change == 10 and dup.get("company"):
                name = dup["company"]
                dup["company"] = name.upper() if rng.random() < 0.5 else name.split(" ")[0]
            elif change == 11 and dup.get("address"):
                for full, short in _STREET_TYPES:
                    dup["address"] = dup["address"].replace(full, short + ".")
            elif change == 12:
                dup.pop("city", None)
            elif change == 13:
                dup.pop("address", None)
                dup.pop("zip", None)
        return dup


def _fmt_phone(rng: random.Random, digits: str) -> str:
    a, b, c = digits[:3], digits[3:6], digits[6:]
    return (f"({a}) {b}-{c}", f"{a}-{b}-{c}", f"{a}.{b}.{c}", f"+1 {a} {b} {c}",
            f"1{a}{b}{c}", f"{a}{b}{c}")[rng.randrange(6)]


def _typo(rng: random.Random, text: str) -> str:
    if len(text) < 3:
        return text
    i = rng.randrange(1, len(text) - 1)
    kind = rng.randrange(4)
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    if kind == 0:
        return text[:i] + text[i + 1 :]
    if kind == 1:
        return text[:i] + letter + text[i:]
    if kind == 2:
        return text[:i] + letter + text[i + 1 :]
    return text[: i - 1] + text[i] + text[i - 1] + text[i + 1 :]


def _cap(name: str) -> str:
    out = "-".join(part.capitalize() for part in name.split("-"))
    if out.startswith(("Mc", "O'")) and len(out) > 2:
        out = out[:2] + out[2].upper() + out[3:]
    return out


DEFAULT_DUPLICATE_RATE = 0.065
"""Share of people with more than one record: about 14 % of records end in clusters of 2-4."""


def stream(
    size: int, *, seed: int = 7, duplicate_rate: float = DEFAULT_DUPLICATE_RATE
) -> Iterator[tuple[str, dict[str, Any], int]]:
    """``(contact_id, properties, person)`` for exactly ``size`` contacts, lazily."""
    for contact_id, props, person, _, _ in stream_with_context(
        size, seed=seed, duplicate_rate=duplicate_rate
    ):
        yield contact_id, props, person


def stream_with_context(
    size: int, *, seed: int = 7, duplicate_rate: float = DEFAULT_DUPLICATE_RATE
) -> Iterator[tuple[str, dict[str, Any], int, int, int]]:
    """As ``stream``, with each record's employer and household index."""
    m = _Maker(seed, size)
    rng = m.rng
    made = 0
    entity = 0
    household = 0
    while made < size:
        household += 1
        home = m.home()
        entity += 1
        people = [m.person(entity, household, home)]
        roll = rng.random()
        if roll < 0.22:  # a household: partner, child or parent, mostly the same surname
            entity += 1
            head = people[0]
            if rng.random() < 0.08:  # junior / senior: same first name and surname
                people.append(m.person(entity, household, home, last=head.last,
                                       first=head.first, female=head.female))
                head.suffix, people[-1].suffix = "Sr.", "Jr."
            else:
                same = rng.random() < 0.8
                people.append(m.person(entity, household, home,
                                       last=head.last if same else None))
        for person in people:
            batch: list[tuple[dict[str, Any], int]] = []
            view = "work" if person.employer >= 0 and rng.random() < 0.85 else "personal"
            first_record = m.record(person, view)
            batch.append(first_record)
            if rng.random() < duplicate_rate:
                extra = rng.choices((1, 2, 3), weights=(70, 22, 8))[0]
                for _ in range(extra):
                    batch.append(_another(m, person, first_record[0], view))
            for props, employer in batch:
                if made == size:
                    return
                made += 1
                yield str(100_000 + made), props, person.entity, employer, person.household


def _another(m: _Maker, p: _Person, seen: dict[str, Any], view: str) -> tuple[dict[str, Any], int]:
    """Another record of the person behind ``seen``."""
    rng = m.rng
    roll = rng.random()
    if roll < 0.5:  # typed again
        employer = p.employer if view == "work" else -1
        return m.noisy(seen, p), employer
    if roll < 0.72 and p.employer >= 0:  # the other view: work vs personal
        props, employer = m.record(p, "personal" if view == "work" else "work")
        return (m.noisy(props, p) if rng.random() < 0.5 else props), employer
    if roll < 0.88:  # a job change: new employer, mailbox, office; the same mobile
        employer = rng.choices(m.company_range, cum_weights=m.company_cum)[0]
        company = m.company(employer)
        p.employer = employer
        p.work_email = m.work_mailbox(company, p.first, p.last)
        p.direct = ""
        if not p.mobile:
            p.mobile = m.phone_digits()
        props, employer = m.record(p, "work")
        if p.mobile and "mobilephone" not in props:
            props["mobilephone"] = _fmt_phone(rng, p.mobile)
        return props, employer
    # a move: new home address and landline
    p.home = m.home()
    props, employer = m.record(p, "personal")
    return props, employer


def generate(
    size: int, *, seed: int = 7, duplicate_rate: float = DEFAULT_DUPLICATE_RATE
) -> Generated:
    """``stream`` collected: the contacts, the person behind each, employers, households."""
    out = Generated()
    for contact_id, props, who, employer, household in stream_with_context(
        size, seed=seed, duplicate_rate=duplicate_rate
    ):
        out.contacts.append((contact_id, props))
        out.entity_of[contact_id] = who
        out.employer_of[contact_id] = employer
        out.household_of[contact_id] = household
    return out


def iter_contacts(generated: Generated) -> Iterator[tuple[str, dict[str, Any]]]:
    """The contacts in CRM order (what a CRM port's listing yields)."""
    yield from generated.contacts
