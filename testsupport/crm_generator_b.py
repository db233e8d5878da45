"""A second CRM generator, written blind to dm's rules: people live lives, records sample them.

``crm_generator.py`` makes a record and copies it with mutations. This one makes a population
and lets time pass: each person has a home, a household, a job, a mobile and mailboxes that
change (moves within a city, a state or across the country; job changes; marriages that change
a surname; a new mobile or personal mailbox), and each CRM record is an independent reading of
that person at one moment through one channel:

* ``form``: a web form the person typed (lower case, nicknames, the state's full name as often
  as its code, a home or work mailbox);
* ``card``: a scanned business card (OCR confusions such as ``0``/``o``, ``rn``/``m``; the
  office's address, main line and work mailbox);
* ``rep``: a sales rep's entry (keyboard-neighbour typos, a nickname, street types abbreviated);
* ``import``: a list import (upper case, codes, E.164 phones, fields missing);
* ``badge``: an event badge scan (given name or nickname, surname, company, work mailbox only).

Hard negatives come from the population, not from rules: households share an address, a
landline and sometimes a family mailbox; twins share a surname, a birth date and a home; small
companies' staff share a role mailbox; namesakes recur as often as Census 1990 frequencies
say. Names from other languages are written with their accents on some records and
transliterated (``unidecode``) on others. Nicknames come from corp-names' merged table.

Two settings: ``standard`` and ``hard`` (more life events, sparser and noisier records, more
shared mailboxes and twins, names concentrated on the commonest so namesakes are many).
"""

from __future__ import annotations

import importlib.resources
import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from unidecode import unidecode

from testsupport.crm_generator import Generated, nickname_variants

# City, state code, state name, ZIP prefix; weights fall with rank. Chosen to hold several
# cities per state, so a move within a state changes the city and not the state.
_PLACES = (
    ("Pittsburgh", "PA", "Pennsylvania", "152"), ("Philadelphia", "PA", "Pennsylvania", "191"),
    ("Allentown", "PA", "Pennsylvania", "181"), ("Columbus", "OH", "Ohio", "432"),
    ("Cincinnati", "OH", "Ohio", "452"), ("Toledo", "OH", "Ohio", "436"),
    ("Houston", "TX", "Texas", "770"), ("El Paso", "TX", "Texas", "799"),
    ("Fort Worth", "TX", "Texas", "761"), ("Oakland", "CA", "California", "946"),
    ("San Jose", "CA", "California", "951"), ("Long Beach", "CA", "California", "908"),
    ("Buffalo", "NY", "New York", "142"), ("Rochester", "NY", "New York", "146"),
    ("Albany", "NY", "New York", "122"), ("Orlando", "FL", "Florida", "328"),
    ("Tallahassee", "FL", "Florida", "323"), ("Savannah", "GA", "Georgia", "314"),
    ("Augusta", "GA", "Georgia", "309"), ("Grand Rapids", "MI", "Michigan", "495"),
    ("Lansing", "MI", "Michigan", "489"), ("Springfield", "MA", "Massachusetts", "011"),
    ("Worcester", "MA", "Massachusetts", "016"), ("Springfield", "IL", "Illinois", "627"),
    ("Peoria", "IL", "Illinois", "616"), ("Tacoma", "WA", "Washington", "984"),
    ("Olympia", "WA", "Washington", "985"), ("Norfolk", "VA", "Virginia", "235"),
    ("Arlington", "VA", "Virginia", "222"), ("Arlington", "TX", "Texas", "760"),
    ("Newark", "NJ", "New Jersey", "071"), ("Trenton", "NJ", "New Jersey", "086"),
    ("Durham", "NC", "North Carolina", "277"), ("Greensboro", "NC", "North Carolina", "274"),
    ("Knoxville", "TN", "Tennessee", "379"), ("Chattanooga", "TN", "Tennessee", "374"),
    ("Lexington", "KY", "Kentucky", "405"), ("Des Moines", "IA", "Iowa", "503"),
    ("Salt Lake City", "UT", "Utah", "841"), ("Provo", "UT", "Utah", "846"),
)
_PLACE_CUM = list(itertools.accumulate(1.0 / (rank + 3) for rank in range(len(_PLACES))))

_ROADS = ("Birch", "Willow", "Chestnut", "Hickory", "Spruce", "Magnolia", "Sycamore", "Walnut",
          "Jefferson", "Lincoln", "Madison", "Monroe", "Jackson", "Franklin", "Adams", "Ridge",
          "Meadow", "River", "Forest", "Highland", "Church", "Mill", "Spring", "Valley")
_ROAD_KINDS = (("Road", "Rd"), ("Street", "St"), ("Avenue", "Ave"), ("Drive", "Dr"),
               ("Court", "Ct"), ("Terrace", "Ter"), ("Parkway", "Pkwy"), ("Way", "Way"))
_TRADES = ("Analytics", "Builders", "Clinic", "Design", "Electric", "Farms", "Group",
           "Holdings", "Insurance", "Law", "Machining", "Networks", "Optical", "Plumbing")
_PROVIDERS = ("gmail.com", "gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "aol.com",
              "comcast.net", "icloud.com", "protonmail.com")
_ROLES = ("info", "office", "admin", "frontdesk", "contact", "hello", "sales")
# Names of other languages, each as its speakers write it; records transliterate some.
_INTERNATIONAL_GIVEN = ("josé", "maría", "zoë", "andré", "renée", "jürgen", "søren", "françois",
                        "ángel", "inés", "björn", "chloé", "łukasz", "mátyás", "noémie", "joão")
_INTERNATIONAL_LAST = ("müller", "núñez", "gonzález", "nguyễn", "peña", "lópez", "schröder",
                       "østergaard", "kowalczyk", "dvořák", "álvarez", "jiménez", "weiß",
                       "öztürk", "martínez", "çelik")
# QWERTY neighbours (a rep's slipped finger) and what OCR reads one glyph as.
_KEYS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_OCR = (("rn", "m"), ("m", "rn"), ("o", "0"), ("l", "1"), ("i", "l"), ("s", "5"), ("e", "c"),
        ("b", "h"), ("cl", "d"), ("g", "q"))


@dataclass(frozen=True)
class Setting:
    """How eventful lives are and how carefully records are kept."""

    name: str
    duplicate_rate: float  # people with more than one record
    extra_records: tuple[int, ...]  # weights of 1, 2, 3 extra records
    event_rate: float  # chance of each life event between two records
    typo_rate: float  # chance a typed field carries a typo
    sparse_rate: float  # chance an optional field is left out
    shared_mailbox_rate: float  # couples sharing a family mailbox
    twin_rate: float  # households with twins
    name_head: int  # names drawn from the commonest this many (namesakes)


STANDARD = Setting("standard", 0.09, (75, 20, 5), 0.25, 0.08, 0.25, 0.04, 0.01, 5000)
HARD = Setting("hard", 0.12, (55, 30, 15), 0.45, 0.18, 0.45, 0.10, 0.03, 400)
SETTINGS = {s.name: s for s in (STANDARD, HARD)}


@dataclass
class _Company:
    name: str
    domain: str
    main_line: str
    place: int
    house: str
    road: str
    zip: str
    small: bool
    staff: set[str] = field(default_factory=set)


@dataclass
class _Home:
    house: str
    road: str
    place: int
    zip: str
    landline: str
    family_mailbox: str = ""


@dataclass
class _Life:
    """A person at one moment: what a record can read."""

    entity: int
    household: int
    first: str
    last: str
    female: bool
    dob: str
    home: _Home
    mobile: str
    personal: str
    company: int
    work: str
    direct: str


class _World:
    def __init__(self, seed: int, size: int, setting: Setting) -> None:
        self.rng = random.Random(seed)  # noqa: S311 (seeded test data, no secret)
        self.s = setting
        self.first_m = _census("dist.male.first", setting.name_head)
        self.first_f = _census("dist.female.first", setting.name_head)
        self.lasts = _census("dist.all.last", setting.name_head * 4)
        self.nicks = nickname_variants()
        self.companies: list[_Company] = []
        # Employers' sizes fall as 1/rank^0.8: the largest holds about 4 % of the employed
        # contacts (a big customer's staff), most hold one to three.
        self.company_cum = list(itertools.accumulate(
            1.0 / (rank + 1) ** 0.8 for rank in range(max(20, size // 4))))
        self.mailboxes: set[str] = set()

    def pick(self, table: tuple[tuple[str, ...], tuple[float, ...]]) -> str:
        return self.rng.choices(table[0], cum_weights=table[1])[0]

    def given(self, female: bool) -> str:
        if self.rng.random() < 0.04:
            return self.rng.choice(_INTERNATIONAL_GIVEN)
        return self.pick(self.first_f if female else self.first_m)

    def surname(self) -> str:
        if self.rng.random() < 0.05:
            return self.rng.choice(_INTERNATIONAL_LAST)
        return self.pick(self.lasts)

    def digits(self, area: str = "") -> str:
        rng = self.rng
        return f"{area or rng.randint(201, 989)}{rng.randint(201, 999)}{rng.randint(0, 9999):04d}"

    def place(self, near: int | None = None, how: str = "anywhere") -> int:
        if near is not None and how == "city":
            return near
        if near is not None and how == "state":
            state = _PLACES[near][1]
            return self.rng.choice([i for i, p in enumerate(_PLACES) if p[1] == state])
        return self.rng.choices(range(len(_PLACES)), cum_weights=_PLACE_CUM)[0]

    def home(self, place: int) -> _Home:
        rng = self.rng
        road = f"{rng.choice(_ROADS)} {rng.choice(_ROAD_KINDS)[0]}"
        return _Home(str(rng.randint(2, 8999)), road, place,
                     _PLACES[place][3] + f"{rng.randint(1, 98):02d}",
                     self.digits() if rng.random() < 0.4 else "")

    def company(self) -> int:
        index = self.rng.choices(range(len(self.company_cum)), cum_weights=self.company_cum)[0]
        while len(self.companies) <= index:
            rng = self.rng
            base = f"{self.surname().capitalize()} {rng.choice(_TRADES)}"
            domain = unidecode(base).lower().replace(" ", "") + f"{len(self.companies)}.com"
            place = self.place()
            self.companies.append(_Company(
                f"{base} {rng.choice(('Inc.', 'LLC', 'Co.', ''))}".strip(), domain,
                self.digits(), place, str(rng.randint(10, 990)),
                f"{rng.choice(_ROADS)} {rng.choice(_ROAD_KINDS)[0]}",
                _PLACES[place][3] + f"{rng.randint(1, 98):02d}", rng.random() < 0.3))
        return index

    def unique(self, local: str, domain: str) -> str:
        local = unidecode(local).lower().replace(" ", "").replace("'", "")
        address, n = f"{local}@{domain}", 1
        while address in self.mailboxes:
            n += 1
            address = f"{local}{n}@{domain}"
        self.mailboxes.add(address)
        return address

    def personal(self, first: str, last: str, dob: str) -> str:
        rng = self.rng
        year = dob[:4] if dob else str(rng.randint(60, 99))
        local = rng.choice((f"{first}.{last}", f"{first[0]}{last}{year[-2:]}", f"{last}{first[0]}",
                            f"{first}{rng.randint(1, 999)}",
                            f"{rng.choice(_ROADS).lower()}{rng.choice(('fan', 'girl', 'guy', 'x'))}"))
        return self.unique(local, rng.choice(_PROVIDERS))

    def job(self, first: str, last: str) -> tuple[int, str, str]:
        index = self.company()
        c = self.companies[index]
        rng = self.rng
        if c.small and rng.random() < 0.6:
            work = f"{rng.choice(_ROLES)}@{c.domain}"  # staff of a small firm share one mailbox
        else:
            work = self.unique(rng.choice((f"{first}.{last}", f"{first[0]}{last}", first)),
                               c.domain)
        c.staff.add(work)
        direct = self.digits(c.main_line[:3]) if rng.random() < 0.35 else ""
        return index, work, direct

    def person(self, entity: int, household: int, home: _Home, *, last: str = "",
               female: bool | None = None, dob: str = "") -> _Life:
        rng = self.rng
        female = rng.random() < 0.5 if female is None else female
        first = self.given(female)
        last = last or self.surname()
        if not dob and rng.random() < 0.3:
            dob = f"{rng.randint(1938, 2004)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        company, work, direct = (self.job(first, last) if rng.random() < 0.7 else (-1, "", ""))
        return _Life(entity, household, first, last, female, dob, home,
                     self.digits() if rng.random() < 0.85 else "",
                     self.personal(first, last, dob), company, work, direct)

    # Time passes -------------------------------------------------------------------------

    def later(self, life: _Life) -> _Life:
        """The same person some months on: each event happens with ``event_rate``."""
        rng, rate = self.rng, self.s.event_rate
        new = replace(life)
        if rng.random() < rate:  # a move: mostly within the city, sometimes far
            how = rng.choices(("city", "state", "anywhere"), weights=(55, 30, 15))[0]
            new.home = self.home(self.place(life.home.place, how))
        if rng.random() < rate * 0.8:  # a job change (or a first job)
            new.company, new.work, new.direct = self.job(new.first, new.last)
        if life.female and rng.random() < rate * 0.1:  # a marriage: a new surname
            new.last = self.surname()
        if rng.random() < rate * 0.3:
            new.mobile = self.digits()
        if rng.random() < rate * 0.3:
            new.personal = self.personal(new.first, new.last, new.dob)
        return new

    # Reading a record --------------------------------------------------------------------

    def record(self, life: _Life) -> dict[str, Any]:
        rng = self.rng
        at_work = life.company >= 0 and rng.random() < 0.6
        channel = rng.choices(("form", "card", "rep", "import", "badge"),
                              weights=(30, 20 if at_work else 0, 25, 15, 10 if at_work else 0))[0]
        sparse = self.s.sparse_rate
        first, last = life.first, life.last
        if channel in ("form", "rep", "badge") and self.nicks.get(first) and rng.random() < 0.3:
            first = rng.choice(self.nicks[first])
        if rng.random() < 0.5:  # transliterated (or just without accents)
            first, last = unidecode(first), unidecode(last)
        props: dict[str, Any] = {"firstname": first, "lastname": last}
        if at_work:
            c = self.companies[life.company]
            props["company"] = c.name
            props["email"] = life.work
            if channel != "badge":
                props["phone"] = _phone(rng, life.direct or c.main_line)
                if rng.random() > sparse:
                    props |= {"address": f"{c.house} {c.road}", "zip": c.zip}
                place = c.place
            else:
                place = -1
            if life.mobile and channel in ("card", "form") and rng.random() < 0.4:
                props["mobilephone"] = _phone(rng, life.mobile)
        else:
            h = life.home
            mailbox = h.family_mailbox if h.family_mailbox and rng.random() < 0.5 else life.personal
            if rng.random() > sparse / 2:
                props["email"] = mailbox
            if life.mobile and rng.random() > sparse / 2:
                props["mobilephone" if rng.random() < 0.7 else "phone"] = _phone(rng, life.mobile)
            if h.landline and rng.random() > sparse:
                props["phone"] = _phone(rng, h.landline)
            if rng.random() > sparse:
                props |= {"address": f"{h.house} {h.road}", "zip": h.zip}
            place = h.place
        if place >= 0:
            city, code, name, _ = _PLACES[place]
            if rng.random() > sparse / 2:
                props["city"] = city
            if rng.random() > sparse / 3:
                props["state"] = code if channel in ("import", "card") or rng.random() < 0.55 else name
        if life.dob and channel in ("form", "import") and rng.random() > sparse:
            props["date_of_birth"] = life.dob
        return self.as_typed(props, channel)

    def as_typed(self, props: dict[str, Any], channel: str) -> dict[str, Any]:
        rng = self.rng
        out: dict[str, Any] = {}
        for key, value in props.items():
            text = str(value)
            if key in ("firstname", "lastname", "city", "company", "address"):
                text = " ".join(w.capitalize() for w in text.split(" "))
                if channel == "rep" and rng.random() < self.s.typo_rate:
                    text = _slip(rng, text)
                elif channel == "card" and rng.random() < self.s.typo_rate:
                    text = _ocr(rng, text)
                if channel == "rep" and key == "address":
                    for full, short in _ROAD_KINDS:
                        text = text.replace(f" {full}", f" {short}.")
            if key == "email" and channel == "card" and rng.random() < self.s.typo_rate:
                text = _ocr(rng, text)
            if channel == "import":
                text = text.upper()
            elif channel == "form" and key != "email" and rng.random() < 0.3:
                text = text.lower()
            out[key] = text
        return out


def _census(filename: str, head: int) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The ``head`` commonest names of a Census 1990 list and their cumulative weights."""
    text = (importlib.resources.files("names") / filename).read_text(encoding="ascii")
    rows = [line.split() for line in text.splitlines()[:head]]
    names = tuple(r[0].lower() for r in rows if len(r) == 4)
    weights = tuple(itertools.accumulate(float(r[1]) for r in rows if len(r) == 4))
    return names, weights


def _phone(rng: random.Random, digits: str) -> str:
    a, b, c = digits[:3], digits[3:6], digits[6:]
    return rng.choice((f"{a}-{b}-{c}", f"({a}) {b} {c}", f"+1{a}{b}{c}", f"{a}.{b}.{c}",
                       f"{a} {b} {c}"))


def _slip(rng: random.Random, text: str) -> str:
    """One key hit beside the intended one, or one letter doubled or dropped."""
    letters = [i for i, ch in enumerate(text) if ch.isalpha()]
    if len(letters) < 3:
        return text
    i = rng.choice(letters[1:])
    ch = text[i].lower()
    row = next((r for r in _KEYS if ch in r), "")
    kind = rng.random()
    if row and kind < 0.6:
        j = row.index(ch)
        near = row[max(0, j - 1) : j] + row[j + 1 : j + 2]
        return text[:i] + rng.choice(near) + text[i + 1 :]
    if kind < 0.8:
        return text[:i] + text[i] + text[i:]
    return text[:i] + text[i + 1 :]


def _ocr(rng: random.Random, text: str) -> str:
    """One glyph read as another it looks like."""
    options = [(a, b) for a, b in _OCR if a in text.lower()]
    if not options:
        return text
    a, b = rng.choice(options)
    i = text.lower().index(a)
    return text[:i] + b + text[i + len(a) :]


def stream(size: int, *, seed: int = 7, setting: str = "standard"
           ) -> Iterator[tuple[str, dict[str, Any], int, int]]:
    """``(contact_id, properties, person, household)`` for exactly ``size`` contacts."""
    s = SETTINGS[setting]
    w = _World(seed, size, s)
    rng = w.rng
    made = entity = household = 0
    while made < size:
        household += 1
        home = w.home(w.place())
        entity += 1
        people = [w.person(entity, household, home)]
        roll = rng.random()
        if roll < 0.35:  # a partner, sharing the home and its landline
            entity += 1
            head = people[0]
            people.append(w.person(entity, household, home, female=not head.female,
                                   last=head.last if rng.random() < 0.7 else ""))
            if rng.random() < s.shared_mailbox_rate:
                home.family_mailbox = w.unique(f"the{head.last}s", rng.choice(_PROVIDERS))
            if rng.random() < s.twin_rate * 10:  # grown children at home; sometimes twins
                twins = rng.random() < 0.5
                dob = f"{rng.randint(1980, 2004)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                for _ in range(2 if twins else 1):
                    entity += 1
                    people.append(w.person(entity, household, home, last=head.last,
                                           dob=dob if twins else ""))
        for life in people:
            records = 1
            if rng.random() < s.duplicate_rate:
                records += rng.choices((1, 2, 3), weights=s.extra_records)[0]
            for n in range(records):
                if n:
                    life = w.later(life)
                if made == size:
                    return
                made += 1
                yield str(500_000 + made), w.record(life), life.entity, life.household


def generate(size: int, *, seed: int = 7, setting: str = "standard") -> Generated:
    """``stream`` collected into the same ``Generated`` the first generator returns."""
    out = Generated()
    for contact_id, props, entity, household in stream(size, seed=seed, setting=setting):
        out.contacts.append((contact_id, props))
        out.entity_of[contact_id] = entity
        out.employer_of[contact_id] = -1
        out.household_of[contact_id] = household
    return out
