"""Seeded, realistic CRM contacts with known duplicates: for tests, the benchmark, the sandbox.

Each generated person gets one clean record and, with some probability, one to three
duplicates made the ways duplicates appear in a real CRM: typos, nicknames, first and last name
swapped, another phone format, plus-addressing, a personal instead of a work address, a field
left empty, a new employer. The data also holds the look-alikes that make precision hard:
family members sharing a surname, phone and address; colleagues sharing a company, domain and
switchboard number; common names at different companies; and placeholder phone numbers shared
by many unrelated records. The same seed always yields the same records.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_FIRST = ["james", "mary", "robert", "patricia", "john", "jennifer", "michael", "linda", "william", "elizabeth", "david", "barbara", "richard", "susan", "joseph", "jessica", "thomas", "sarah", "charles", "karen", "christopher", "nancy", "daniel", "lisa", "matthew", "betty", "anthony", "margaret", "mark", "sandra", "donald", "ashley", "steven", "kimberly", "paul", "emily", "andrew", "donna", "joshua", "michelle", "kenneth", "dorothy", "kevin", "carol", "brian", "amanda", "george", "melissa", "timothy", "deborah", "ronald", "stephanie", "edward", "rebecca", "jason", "sharon", "jeffrey", "laura", "ryan", "cynthia", "jacob", "kathleen", "gary", "amy", "nicholas", "angela", "eric", "shirley", "jonathan", "anna", "stephen", "brenda", "larry", "pamela", "justin", "emma", "scott", "nicole", "brandon", "helen", "benjamin", "samantha", "samuel", "katherine", "gregory", "christine", "alexander", "debra", "frank", "rachel", "patrick", "carolyn", "raymond", "janet", "jack", "catherine", "dennis", "maria", "jerry", "heather", "tyler", "diane", "aaron", "ruth", "jose", "julie", "adam", "olivia", "nathan", "joyce", "henry", "virginia", "douglas", "victoria", "zachary", "kelly", "peter", "lauren", "kyle", "christina", "ethan", "joan", "walter", "evelyn", "noah", "judith", "jeremy", "megan", "christian", "andrea", "keith", "cheryl", "roger", "hannah", "terry", "jacqueline", "gerald", "martha", "harold", "gloria", "sean", "teresa", "austin", "ann", "carl", "sara", "arthur", "madison", "lawrence", "frances", "dylan", "kathryn", "jesse", "janice", "jordan", "jean", "bryan", "abigail", "billy", "alice", "joe", "julia", "bruce", "judy", "gabriel", "sophia", "logan", "grace", "albert", "denise", "willie", "amber", "alan", "doris", "juan", "marilyn", "wayne", "danielle", "elijah", "beverly", "randy", "isabella", "roy", "theresa", "vincent", "diana", "ralph", "natalie", "eugene", "brittany", "russell", "charlotte", "bobby", "marie", "mason", "kayla", "philip", "alexis", "louis", "lori", "priya", "wei", "mohammed", "aisha", "carlos", "sofia", "hiroshi", "mei", "fatima", "diego", "ana", "chen", "olga", "raj", "yuki"]

_LAST = ["smith", "johnson", "williams", "brown", "jones", "garcia", "miller", "davis", "rodriguez", "martinez", "hernandez", "lopez", "gonzalez", "wilson", "anderson", "thomas", "taylor", "moore", "jackson", "martin", "lee", "perez", "thompson", "white", "harris", "sanchez", "clark", "ramirez", "lewis", "robinson", "walker", "young", "allen", "king", "wright", "scott", "torres", "nguyen", "hill", "flores", "green", "adams", "nelson", "baker", "hall", "rivera", "campbell", "mitchell", "carter", "roberts", "gomez", "phillips", "evans", "turner", "diaz", "parker", "cruz", "edwards", "collins", "reyes", "stewart", "morris", "morales", "murphy", "cook", "rogers", "gutierrez", "ortiz", "morgan", "cooper", "peterson", "bailey", "reed", "kelly", "howard", "ramos", "kim", "cox", "ward", "richardson", "watson", "brooks", "chavez", "wood", "james", "bennett", "gray", "mendoza", "ruiz", "hughes", "price", "alvarez", "castillo", "sanders", "patel", "myers", "long", "ross", "foster", "jimenez", "powell", "jenkins", "perry", "russell", "sullivan", "bell", "coleman", "butler", "henderson", "barnes", "gonzales", "fisher", "vasquez", "simmons", "romero", "jordan", "patterson", "alexander", "hamilton", "graham", "reynolds", "griffin", "wallace", "moreno", "west", "cole", "hayes", "bryant", "herrera", "gibson", "ellis", "tran", "medina", "aguilar", "stevens", "murray", "ford", "castro", "marshall", "owens", "harrison", "fernandez", "mcdonald", "woods", "washington", "kennedy", "wells", "vargas", "henry", "chen", "freeman", "webb", "tucker", "guzman", "burns", "crawford", "olson", "simpson", "porter", "hunter", "gordon", "mendez", "silva", "shaw", "snyder", "mason", "dixon", "munoz", "hunt", "hicks", "holmes", "palmer", "wagner", "black", "robertson", "boyd", "rose", "stone", "salazar", "fox", "warren", "mills", "meyer", "rice", "schmidt", "garza", "daniels", "ferguson", "nichols", "stephens", "soto", "weaver", "ryan", "gardner", "payne", "grant", "dunn", "kelley", "spencer", "hawkins", "arnold", "pierce", "vazquez", "hansen", "peters", "santos", "hart", "bradley", "knight", "elliott", "cunningham", "duncan", "armstrong", "hudson", "carroll", "lane", "riley", "andrews", "alvarado", "ray", "delgado", "berry", "perkins", "hoffman", "johnston", "matthews", "pena", "richards", "willis", "carrillo", "o'brien", "mcallister"]

_SYLLABLES = ["ka", "ren", "tor", "vel", "mis", "dan", "bro", "ley", "har", "wick", "sten", "ford", "lan", "dor", "mer", "ric", "sel", "ton", "bar", "gal", "fen", "ros", "lin", "mar", "quist", "berg", "hol", "ash", "by", "den", "ell", "fir", "gus", "hew", "ing", "jor", "kel", "lom", "nor", "pel", "rud", "sor", "tam", "ulf", "var", "wes", "yor", "zel"]

_CITIES = ["new-york:ny", "los-angeles:ca", "chicago:il", "houston:tx", "phoenix:az", "philadelphia:pa", "san-antonio:tx", "san-diego:ca", "dallas:tx", "austin:tx", "jacksonville:fl", "columbus:oh", "charlotte:nc", "indianapolis:in", "seattle:wa", "denver:co", "boston:ma", "nashville:tn", "portland:or", "las-vegas:nv", "detroit:mi", "memphis:tn", "louisville:ky", "baltimore:md", "milwaukee:wi", "albuquerque:nm", "tucson:az", "fresno:ca", "sacramento:ca", "atlanta:ga", "omaha:ne", "raleigh:nc", "miami:fl", "oakland:ca", "minneapolis:mn", "tulsa:ok", "cleveland:oh", "wichita:ks", "tampa:fl", "springfield:il", "madison:wi", "boise:id", "richmond:va", "spokane:wa", "savannah:ga"]

_FREE = ("gmail.com", "yahoo.com", "hotmail.com", "outlook.com", "icloud.com", "aol.com")
_TLDS = (".com", ".com", ".com", ".io", ".co", ".net")
_SUFFIXES = ("Inc", "LLC", "Ltd", "Group", "Co", "", "", "")
_PLACEHOLDERS = ("555-555-5555", "000-000-0000", "(123) 456-7890", "999-999-9999")
_NICK = {
    "robert": "bob",
    "william": "bill",
    "elizabeth": "liz",
    "michael": "mike",
    "james": "jim",
    "richard": "rick",
    "thomas": "tom",
    "joseph": "joe",
    "christopher": "chris",
    "daniel": "dan",
    "matthew": "matt",
    "anthony": "tony",
    "katherine": "kate",
    "jennifer": "jen",
    "rebecca": "becky",
    "samuel": "sam",
    "benjamin": "ben",
    "jonathan": "jon",
    "stephen": "steve",
    "edward": "ed",
    "margaret": "maggie",
    "patricia": "pat",
    "timothy": "tim",
    "alexander": "alex",
    "nicholas": "nick",
    "andrew": "andy",
    "david": "dave",
    "kenneth": "ken",
    "ronald": "ron",
    "victoria": "vicky",
}


@dataclass
class Generated:
    """Generated contacts: CRM properties by id, the person behind each id, and the truth.

    Attributes:
        contacts: ``(contact_id, properties)`` in generation order.
        entity_of: The person (entity id) each contact id belongs to.
    """

    contacts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    entity_of: dict[str, int] = field(default_factory=dict)

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


class _Maker:
    """The random choices of one generation run."""

    def __init__(self, seed: int, size: int) -> None:
        self.rng = random.Random(seed)  # noqa: S311 - test data, reproducible by design
        self.size = size
        # Surnames: a Zipf-like head of real names and a long tail of made-up rare ones.
        self.last_head = _LAST
        self.head_weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(_LAST))]
        self.first_weights = [1.0 / (rank + 1) ** 0.6 for rank in range(len(_FIRST))]
        self.companies = [self._company() for _ in range(max(20, size // 12))]

    def word(self, syllables: int) -> str:
        return "".join(self.rng.choice(_SYLLABLES) for _ in range(syllables))

    def _company(self) -> tuple[str, str, str]:
        base = self.word(self.rng.choice((2, 2, 3))).capitalize()
        if self.rng.random() < 0.3:
            base += " " + self.rng.choice(("Labs", "Partners", "Systems", "Foods", "Dental"))
        suffix = self.rng.choice(_SUFFIXES)
        name = f"{base} {suffix}".strip()
        domain = base.lower().replace(" ", "") + self.rng.choice(_TLDS)
        switchboard = self.phone_digits()
        return name, domain, switchboard

    def phone_digits(self) -> str:
        area = self.rng.randint(201, 989)
        return f"{area}{self.rng.randint(200, 999)}{self.rng.randint(0, 9999):04d}"

    def surname(self) -> str:
        if self.rng.random() < 0.55:
            return self.rng.choices(self.last_head, self.head_weights)[0]
        return self.word(self.rng.choice((2, 3)))

    def first_name(self) -> str:
        return self.rng.choices(_FIRST, self.first_weights)[0]


def _fmt_phone(rng: random.Random, digits: str) -> str:
    a, b, c = digits[:3], digits[3:6], digits[6:]
    style = rng.randrange(6)
    return (
        f"({a}) {b}-{c}",
        f"{a}-{b}-{c}",
        f"{a}.{b}.{c}",
        f"+1 {a} {b} {c}",
        f"1{a}{b}{c}",
        f"{a}{b}{c}",
    )[style]


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
    return "-".join(part.capitalize() for part in name.split("-")).replace("O'b", "O'B")


def _person(m: _Maker, surname: str | None = None, first: str | None = None) -> dict[str, Any]:
    """One clean person: name, work or personal email, phone, company, city."""
    rng = m.rng
    first, last = first or m.first_name(), surname or m.surname()
    company, domain, switchboard = rng.choice(m.companies)
    city, state = rng.choice(_CITIES).split(":")
    local = rng.choice(
        (f"{first}.{last}", f"{first}{last}", f"{first[0]}{last}", f"{first}{rng.randint(1, 99)}")
    ).replace("'", "")
    if rng.random() < 0.55:
        address = f"{local}@{domain}"
    else:
        address = f"{local}{rng.choice(('', '', str(rng.randint(1, 999))))}@{rng.choice(_FREE)}"
    if rng.random() < 0.03:
        phone = rng.choice(_PLACEHOLDERS)
    elif rng.random() < 0.15:
        phone = _fmt_phone(rng, switchboard)
    elif rng.random() < 0.9:
        phone = _fmt_phone(rng, m.phone_digits())
    else:
        phone = ""
    return {
        "firstname": first.capitalize(),
        "lastname": _cap(last),
        "email": address,
        "phone": phone,
        "company": company if rng.random() < 0.85 else "",
        "city": city.replace("-", " ").title() if rng.random() < 0.8 else "",
        "state": state.upper(),
    }


def _duplicate(m: _Maker, original: dict[str, Any]) -> dict[str, Any]:
    """A second record of the same person, changed the ways CRM duplicates are."""
    rng = m.rng
    dup = dict(original)
    first, last = dup["firstname"], dup["lastname"]
    changes = rng.sample(range(12), k=rng.choice((1, 2, 2, 3)))
    for change in changes:
        if change == 0:
            dup["firstname"] = _typo(rng, first)
        elif change == 1:
            dup["lastname"] = _typo(rng, last)
        elif change == 2 and first.lower() in _NICK:
            dup["firstname"] = _NICK[first.lower()].capitalize()
        elif change == 3:
            dup["firstname"], dup["lastname"] = last, first
        elif change == 4 and dup["phone"]:
            digits = "".join(ch for ch in dup["phone"] if ch.isdigit())[-10:]
            dup["phone"] = _fmt_phone(rng, digits) if len(digits) == 10 else dup["phone"]
        elif change == 5 and "@" in dup["email"]:
            local, domain = dup["email"].split("@")
            dup["email"] = f"{local}+{rng.choice(('crm', 'news', 'work'))}@{domain}"
        elif change == 6:
            local = f"{first}.{last}".lower().replace("'", "")
            dup["email"] = f"{local}{rng.randint(1, 99)}@{rng.choice(_FREE)}"
        elif change == 7:
            dup["email"] = dup["email"].upper() if rng.random() < 0.5 else ""
        elif change == 8:
            dup["phone"] = "" if rng.random() < 0.5 else _fmt_phone(rng, m.phone_digits())
        elif change == 9:
            company, domain, _ = rng.choice(m.companies)
            dup["company"] = company
            local = f"{first[0]}{last}".lower().replace("'", "")
            dup["email"] = f"{local}@{domain}"
        elif change == 10:
            name = dup["company"]
            dup["company"] = name.upper() if rng.random() < 0.5 else name.split(" ")[0]
        elif change == 11:
            dup["city"] = ""
    return dup


def stream(
    size: int, *, seed: int = 7, duplicate_rate: float = 0.2
) -> Iterator[tuple[str, dict[str, Any], int]]:
    """``(contact_id, properties, person)`` for exactly ``size`` contacts, lazily.

    About ``duplicate_rate`` of the people get one to three duplicates; a few get a family
    member or a namesake (different people who look alike).
    """
    m = _Maker(seed, size)
    rng = m.rng
    made = 0
    entity = 0

    def emit(props: dict[str, Any], who: int) -> tuple[str, dict[str, Any], int]:
        nonlocal made
        made += 1
        return str(100_000 + made), props, who

    while True:
        entity += 1
        person = _person(m)
        batch = [(person, entity)]
        roll = rng.random()
        if roll < duplicate_rate:
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                batch.append((_duplicate(m, person), entity))
        elif roll < duplicate_rate + 0.05:
            # A family member: same surname, phone, city; another first name and mailbox.
            entity += 1
            relative = _person(m, surname=person["lastname"].lower())
            relative.update(phone=person["phone"], city=person["city"], state=person["state"])
            batch.append((relative, entity))
        elif roll < duplicate_rate + 0.08:
            # A namesake: the same name, somewhere else entirely.
            entity += 1
            namesake = _person(
                m, surname=person["lastname"].lower(), first=person["firstname"].lower()
            )
            batch.append((namesake, entity))
        for props, who in batch:
            if made == size:
                return
            yield emit(props, who)


def generate(size: int, *, seed: int = 7, duplicate_rate: float = 0.2) -> Generated:
    """``stream`` collected: the contacts and the person behind each."""
    out = Generated()
    for contact_id, props, who in stream(size, seed=seed, duplicate_rate=duplicate_rate):
        out.contacts.append((contact_id, props))
        out.entity_of[contact_id] = who
    return out


def iter_contacts(generated: Generated) -> Iterator[tuple[str, dict[str, Any]]]:
    """The contacts in CRM order (what a CRM port's listing yields)."""
    yield from generated.contacts
