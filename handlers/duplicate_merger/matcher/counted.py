"""What this CRM's own records say, counted by dm-block without a training step: the pairs a
sure rule finds, how often one person's records agree on a field across contexts of a life,
and which agreements explain others here. Each count travels in every block message and is
shrunk towards its documented prior (``weights``) by ``PRIOR_PAIRS`` pseudo-pairs, so a small
CRM keeps the prior and a large one its own measure.

**Sure pairs** (``SureRule``): pairs meeting a rule almost no two different people meet. Their
number estimates how common duplicates are (``baseline``); the pairs themselves are what the
context counts are counted over.

**Fields across contexts.** Fields across contexts, counted in this CRM: how often one person's records agree on a field
when they come from two contexts of a life, from an unknown one, or from one home.

A place belongs to a context (``weights.OTHER_CONTEXT_PRIORS``): a work record carries the
office's city and a personal record the home's. A mailbox and a mobile belong to one too: at
one home a person holds one of each. How often one person's records agree on them depends on
the CRM (a city-wide business, a national one, how finely cities are written, whether its
forms ask for a personal or a work mailbox), so a fixed prior is right for one CRM and wrong
for the next. Where it is wrong, a namesake in the same city is weighed as if the city were the
person's own, or a junior at his father's address as if his second mailbox were a typo, and
the number of both grows with the CRM.

dm-block therefore counts them, without a training step, over the pairs a sure rule already
finds (``RULES``, of ``SureRule``'s kind), per context (``levels.pair_context``), the fields
``weights.CONTEXT_PRIORS`` names for it. The rule is the same full name and the
same mobile (a mobile is one person's), and for the mobile itself the same full name and the
same personal mailbox (``RULE_FIELD``): a field is never counted over the pairs its own
agreement selects. The counts travel in every block message; ``context_priors`` turns them
into the priors dm-score uses, each shrunk towards the documented prior by ``PRIOR_PAIRS``
pseudo-pairs, so a small CRM keeps the prior and a large one its own measure.

**Agreements that explain others.** Agreements that explain others, counted in this CRM: how far its places nest, and how often
two people at one home share a surname without being one person.

One real fact shows in several fields, so an agreement another one explains counts with a floor
on its share (``weights.implied_floors``). Two of those explanations are facts about the
data, not about people, and a fixed floor is right for one data set and wrong for the next:

* **Places nest** where the fields describe one geography: a street address lies in one
  postcode, a postcode in one city, a city in one state (``weights.PLACE_IMPLICATIONS``). In a
  CRM they do, and two contacts at one address agreeing on its postcode say nothing new. In a
  data set whose place fields were drawn apart they do not: Febrl's generator takes
  "addresses (based on frequency tables for suburbs, postcodes, street number and addresses,
  and state or territory names)" (Febrl 0.2.2 manual, "11.2 Database generator Program
  'generate.py'", https://users.cecs.anu.edu.au/~Peter.Christen/Febrl/febrl-0.2.2/febrldoc-0.2.2/node56.html),
  one table per field, so there a shared postcode is as much news beside a shared address as
  without it. Floored as if nested, FEBRL's true pairs lost their postcode, city and state as
  evidence and hundreds fell below the review band.
* **Households share a surname** (``weights.HOUSEHOLD_SURNAME_SHARE``): a home explains a
  shared surname as often as families live together in the data. A person register without
  households (FEBRL) has none, and there a shared surname at one address is the person's.

dm-block counts both, without a training step, over pairs it can tell apart without scoring
them:

* for each implication, consecutive contacts (in id order) holding one finer place whose names
  and birth dates say they are two people (``levels.different_people``): how many also hold
  the coarser place. That is the floor itself, P(agree | the finer place agrees, two people).
  Few different people share a street address, so the address's counts are shrunk towards
  what the postcode's city says (the count with the most pairs: whether this CRM's places nest
  at all), the others towards ``IMPLIED_SHARE``, each by ``PRIOR_PAIRS`` pseudo-pairs;
* consecutive contacts at one home (a street address or a landline held by fewer than
  ``SHARED_HOLDERS``; not one personal mailbox, which is one person, nor one employer, whose
  office it is), how many share a surname, and of those with a
  birth date on both, how many share it. Relatives at one home do not share a birth date, one
  person's two records do (``PRIORS["dob"].exact``), so the birth dates say how many of the
  same-surname pairs are one person; the rest are families, over the different people at
  homes: ``household_share``, shrunk towards ``HOUSEHOLD_SURNAME_SHARE`` by the dated pairs.

Measured (``make bench-dm``'s data): the generated CRM's places nest (every count about 0.998)
and FEBRL's do not (a postcode's city 0.004 to 0.075). FEBRL's same-surname pairs at one home
share a birth date 90 to 97 % of the time: no households, a share of 0.003 to 0.033. The
generated CRM's give 0.29 / 0.39 / 0.24 at 20k / 100k / 1M contacts, about the documented
0.25; counted with coworkers at small offices among the homes they gave 0.22 / 0.11 / 0.02,
and the review band's precision fell with size (0.989 / 0.984 / 0.982).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, pairwise, repeat
from operator import attrgetter

from handlers.duplicate_merger.matcher.levels import (
    Context,
    different_people,
    field_levels,
    pair_context,
)
from handlers.duplicate_merger.matcher.normalize import is_role_mailbox
from handlers.duplicate_merger.matcher.profile import FIELDS, MOBILE, Profile
from handlers.duplicate_merger.matcher.weights import (
    CONTEXT_PRIORS,
    HOUSEHOLD_SURNAME_SHARE,
    IMPLIED_SHARE,
    NAMESAKES_AT_HOME,
    PLACE_IMPLICATIONS,
    PRIORS,
    SHARED_HOLDERS,
    Explained,
    FieldPrior,
    Implication,
)

# Sure pairs -------------------------------------------------------------------------------

def _address_line(p: Profile) -> str:
    return f"{p.house} {p.street}" if p.street else ""


@dataclass(frozen=True)
class SureRule:
    """Two contacts meet the rule when they hold one ``anchor`` value, and when ``named`` one
    full name too; a ``personal`` anchor is a mailbox, and a function's (``info@``) is none."""

    anchor: Callable[[Profile], str]
    named: bool = False
    personal: bool = False

    def value(self, p: Profile, anchor: str) -> str:
        """What two contacts meeting the rule share ("" if ``p`` cannot meet it)."""
        if self.personal and is_role_mailbox(anchor):
            return ""
        if not self.named:
            return anchor
        return f"{p.first}|{p.last}|{anchor}" if p.first and p.last and anchor else ""


NAME_AND_MOBILE = SureRule(attrgetter("mobile"), named=True)
"""One full name and one mobile: a mobile is one person's."""

SURE_RULES: tuple[SureRule, ...] = (
    SureRule(attrgetter("email"), personal=True),
    NAME_AND_MOBILE,
    SureRule(attrgetter("dob"), named=True),
    SureRule(_address_line, named=True),
)
"""Rules two different people almost never meet: the same personal mailbox; the same full
name and mobile, or birth date, or street address (a main line is shared by coworkers). Used
to estimate how common duplicates are (``baseline.baseline``); ``count_contexts`` counts over two
such rules how one person's records agree."""


def count_sure_pairs(profiles: Sequence[Profile], *, cap: int) -> int:
    """Distinct pairs meeting a sure rule, ignoring values shared by more than ``cap`` contacts
    (a placeholder address is not evidence). One rule at a time, to bound memory."""
    found: set[tuple[int, int]] = set()
    for rule in SURE_RULES:
        anchors = list(map(rule.anchor, profiles))
        held = Counter(anchors)
        held.pop("", None)
        # Only contacts whose anchor another contact holds can meet the rule: the rest (most
        # of a CRM) are skipped at C speed, and a value's count among those left is its count.
        shared = compress(range(len(anchors)), map((1).__lt__, map(held.get, anchors, repeat(0))))
        groups: dict[str, list[int]] = defaultdict(list)
        for index in shared:
            value = rule.value(profiles[index], anchors[index])
            if value:
                groups[value].append(index)
        for members in groups.values():
            if len(members) > cap:
                continue
            for x, i in enumerate(members):
                for j in members[x + 1 :]:
                    found.add((i, j))
        del anchors, held, groups
    return len(found)


# Fields across contexts -------------------------------------------------------------------

RULES: Mapping[str, SureRule] = {
    "mobile": NAME_AND_MOBILE,
    "email": SureRule(attrgetter("email"), named=True, personal=True),
}
"""The sure rules the counts rest on, by the field they pair on (with the full name)."""

RULE_FIELD: Mapping[str, str] = {"mobile": "email"}
"""The rule (``RULES``) a field is counted over: the mobile's for every field but the mobile
itself, which is counted over one full name and one personal mailbox."""

PRIOR_PAIRS = 20
"""Pseudo-pairs of the documented prior each count is shrunk with: below about that many
counted pairs the prior dominates; a CRM of 20,000 contacts already counts dozens to hundreds
per context."""

NAMESAKE_PRIOR_PAIRS = 2
"""Pseudo-pairs of ``NAMESAKES_AT_HOME`` the counted juniors and seniors are shrunk with. That
share is a round guess (two documented shares multiplied), not a measure, and a CRM of 20,000
contacts shows only a few such pairs (4 on the second generator): at ``PRIOR_PAIRS`` the guess
outweighed them, so a rare full name weighed less the smaller the CRM and the cut moved with
its size (second generator: 0.064 used at 20k, 0.038 at 100k, where the counts alone say
0.010 and 0.022; pairs at -2 to 0 bits were duplicates 0.78 of the time at 20k, 0.47 at 100k)."""

LEAST_SHARE = 0.005
"""The least P(agree | same person) a count may give: an agreement is never counted as
impossible for one person (``FieldPrior.differ`` floors a disagreement the same way)."""


@dataclass(frozen=True)
class AgreementCount:
    """Of ``pairs`` counted pairs holding the field on both records, how many agree exactly
    and how many similarly."""

    exact: int
    similar: int
    pairs: int

    def to_wire(self) -> list[int]:
        return [self.exact, self.similar, self.pairs]

    @classmethod
    def from_wire(cls, row: Sequence[object]) -> AgreementCount:
        exact, similar, pairs = (int(str(x)) for x in row)
        if min(exact, similar, pairs) < 0 or exact + similar > pairs:
            raise ValueError("an agreement count is out of range")
        return cls(exact, similar, pairs)


ContextCounts = dict[Context, dict[str, AgreementCount]]
"""Per counted context, per field (``weights.CONTEXT_PRIORS``), its agreement count."""


def _sure_groups(profiles: Sequence[Profile], rule: SureRule, cap: int) -> list[list[Profile]]:
    """Contacts meeting ``rule`` together, in groups of 2 to ``cap``: a value held by more is
    not one person's."""
    groups: dict[str, list[Profile]] = defaultdict(list)
    for p in profiles:
        value = rule.value(p, rule.anchor(p))
        if value:
            groups[value].append(p)
    return [members for members in groups.values() if 2 <= len(members) <= cap]


def count_contexts(profiles: Sequence[Profile], *, cap: int) -> ContextCounts:
    """Field agreement, per context, over the pairs each field's sure rule finds
    (``RULE_FIELD``)."""
    index = {
        (context, rule): {
            name: FIELDS.index(name) for name in fields if RULE_FIELD.get(name, "mobile") == rule
        }
        for context, fields in CONTEXT_PRIORS.items()
        for rule in RULES
    }
    exact: Counter[tuple[Context, str]] = Counter()
    similar: Counter[tuple[Context, str]] = Counter()
    pairs: Counter[tuple[Context, str]] = Counter()
    for rule, sure in RULES.items():
        for members in _sure_groups(profiles, sure, cap):
            for x, a in enumerate(members):
                av = a.values()
                for b in members[x + 1 :]:
                    bv = b.values()
                    levels = field_levels(av, bv)
                    context = pair_context(levels, av, bv)
                    for name, i in index.get((context, rule), {}).items():
                        level = levels[i]
                        if level is None:
                            continue
                        pairs[context, name] += 1
                        exact[context, name] += level == "exact"
                        similar[context, name] += level == "similar"
    return {
        context: {
            name: AgreementCount(exact[context, name], similar[context, name], pairs[context, name])
            for name in fields
        }
        for context, fields in CONTEXT_PRIORS.items()
    }


def counts_to_wire(counts: ContextCounts) -> dict[str, dict[str, list[int]]]:
    """The counts as a block message carries them."""
    return {
        context: {name: count.to_wire() for name, count in fields.items()}
        for context, fields in counts.items()
    }


def counts_from_wire(data: Mapping[str, Mapping[str, Sequence[object]]]) -> ContextCounts:
    """The counts of a block message: every counted context and field, each in range."""
    return {
        context: {name: AgreementCount.from_wire(data[context][name]) for name in fields}
        for context, fields in CONTEXT_PRIORS.items()
    }


def context_priors(counts: Mapping[Context, Mapping[str, AgreementCount]]) -> dict[
    Context, dict[str, FieldPrior]
]:
    """The priors per context: each field's counted shares, shrunk towards
    ``CONTEXT_PRIORS`` by ``PRIOR_PAIRS``; a field not counted keeps its prior."""
    out: dict[Context, dict[str, FieldPrior]] = {}
    for context, documented in CONTEXT_PRIORS.items():
        counted = counts.get(context, {})
        out[context] = {}
        for name, prior in documented.items():
            count = counted.get(name, AgreementCount(0, 0, 0))
            weight = count.pairs + PRIOR_PAIRS
            exact = (count.exact + PRIOR_PAIRS * prior.exact) / weight
            similar = (count.similar + PRIOR_PAIRS * prior.similar) / weight
            out[context][name] = FieldPrior(
                max(exact, LEAST_SHARE), similar, prior.spread, prior.disagreement_counts
            )
    return out


# Agreements that explain others ----------------------------------------------------------

_INDEX = {name: FIELDS.index(name) for name in FIELDS}


def _address(p: Profile) -> str:
    return f"{p.house} {p.street}" if p.house and p.street else ""


PLACES: Mapping[str, Callable[[Profile], str]] = {
    "address": _address,
    "postcode": lambda p: p.postcode,
    "city": lambda p: p.city,
}
"""The finer place of each implication, as a value contacts are grouped on."""

HOMES: tuple[Callable[[Profile], str], ...] = (_address, lambda p: p.phone)
"""What makes a shared home (``levels.shared_home``): a street address or a landline."""

NESTING: Implication = ("postcode", "city")
"""The count the address's counts are shrunk towards: whether this CRM's places nest at all."""


@dataclass(frozen=True)
class PlaceCount:
    """Of ``pairs`` pairs of two people at one finer place, both holding the coarser one,
    how many hold the same."""

    agree: int
    pairs: int


@dataclass(frozen=True)
class HomeCount:
    """Pairs at one home: ``pairs`` with a surname on both, ``same_surname`` of them sharing
    it, ``dated`` of those with a birth date on both, ``same_dob`` of those sharing it."""

    pairs: int
    same_surname: int
    dated: int
    same_dob: int


@dataclass(frozen=True)
class NamesakeCount:
    """Of ``contacts`` contacts, ``mobiles`` hold a mobile; ``two_people`` pairs of one full
    name at one home hold two different mobiles (a junior and a senior: a mobile is one
    person's); of ``sure`` pairs of one full name and one mobile (one person's records, the
    mobile on both), ``sure_at_home`` show one home."""

    contacts: int = 0
    mobiles: int = 0
    two_people: int = 0
    sure: int = 0
    sure_at_home: int = 0

    def to_wire(self) -> list[int]:
        return [self.contacts, self.mobiles, self.two_people, self.sure, self.sure_at_home]

    @classmethod
    def from_wire(cls, row: Sequence[object]) -> NamesakeCount:
        count = cls(*_naturals(row, 5))
        if count.mobiles > count.contacts or count.sure_at_home > count.sure:
            raise ValueError("a namesake count is out of range")
        return count


@dataclass(frozen=True)
class DependenceCounts:
    """What dm-block counted: per implication its ``PlaceCount``, the homes', and the full
    names at one home."""

    places: Mapping[Implication, PlaceCount]
    homes: HomeCount
    namesakes: NamesakeCount = NamesakeCount()

    def to_wire(self) -> dict[str, list[int]]:
        """The counts as a block message carries them: ``"address>postcode": [agree, pairs]``
        per implication, ``"homes": [pairs, same_surname, dated, same_dob]`` and
        ``"namesakes": [contacts, mobiles, two_people, sure, sure_at_home]``."""
        wire = {f"{a}>{b}": [c.agree, c.pairs] for (a, b), c in self.places.items()}
        h = self.homes
        return {
            **wire,
            "homes": [h.pairs, h.same_surname, h.dated, h.same_dob],
            "namesakes": self.namesakes.to_wire(),
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Sequence[object]]) -> DependenceCounts:
        """The counts of a block message: every implication and the homes, each in range."""
        places = {}
        for a, b in PLACE_IMPLICATIONS:
            agree, pairs = _naturals(data[f"{a}>{b}"], 2)
            if agree > pairs:
                raise ValueError("a place count is out of range")
            places[a, b] = PlaceCount(agree, pairs)
        pairs, same_surname, dated, same_dob = _naturals(data["homes"], 4)
        if not same_dob <= dated <= same_surname <= pairs:
            raise ValueError("a home count is out of range")
        return cls(
            places,
            HomeCount(pairs, same_surname, dated, same_dob),
            NamesakeCount.from_wire(data["namesakes"]),
        )


def _naturals(row: Sequence[object], n: int) -> list[int]:
    values = [int(str(x)) for x in row]
    if len(values) != n or min(values) < 0:
        raise ValueError("a dependence count is out of range")
    return values


def _neighbours(
    profiles: Sequence[Profile], value: Callable[[Profile], str], most: int | None = None
) -> Iterator[tuple[Profile, Profile]]:
    """Consecutive contacts (in the given order) sharing ``value``, in groups of at most
    ``most`` (a value held by more is not a home): one pair per contact, a sample the size of
    the CRM whatever a group's size."""
    groups: dict[str, list[Profile]] = defaultdict(list)
    for p in profiles:
        v = value(p)
        if v:
            groups[v].append(p)
    for members in groups.values():
        if most is None or len(members) < most:
            yield from pairwise(members)


def count_dependence(profiles: Sequence[Profile]) -> DependenceCounts:
    """Place nesting and surnames at one home, over ``profiles`` (sorted by id)."""
    places: dict[Implication, PlaceCount] = {}
    for finer, value in PLACES.items():
        coarser = [b for a, b in PLACE_IMPLICATIONS if a == finer]
        agree = dict.fromkeys(coarser, 0)
        pairs = dict.fromkeys(coarser, 0)
        for a, b in _neighbours(profiles, value):
            av, bv = a.values(), b.values()
            if not different_people(av, bv):
                continue
            for name in coarser:
                x, y = av[_INDEX[name]], bv[_INDEX[name]]
                if x and y:
                    pairs[name] += 1
                    agree[name] += x == y
        for name in coarser:
            places[finer, name] = PlaceCount(agree[name], pairs[name])
    return DependenceCounts(places, _count_homes(profiles), count_namesakes(profiles))


def _count_homes(profiles: Sequence[Profile]) -> HomeCount:
    pairs = same_surname = dated = same_dob = 0
    for home in HOMES:
        for a, b in _neighbours(profiles, home, SHARED_HOLDERS):
            if not (a.last and b.last) or _one_mailbox(a, b) or _one_employer(a, b):
                continue
            pairs += 1
            if a.last != b.last:
                continue
            same_surname += 1
            if a.dob and b.dob:
                dated += 1
                same_dob += a.dob == b.dob
    return HomeCount(pairs, same_surname, dated, same_dob)


def _one_mailbox(a: Profile, b: Profile) -> bool:
    """One personal mailbox: one person, not a household."""
    return bool(a.email) and a.email == b.email and not is_role_mailbox(a.email)


def _one_employer(a: Profile, b: Profile) -> bool:
    """One company or company domain: coworkers at their office, not a household."""
    return (bool(a.company) and a.company == b.company) or (
        bool(a.domain) and a.domain == b.domain
    )


def _home_values(p: Profile) -> tuple[str, ...]:
    return tuple(v for v in (_address(p), p.phone) if v)


def count_namesakes(profiles: Sequence[Profile]) -> NamesakeCount:
    """Juniors and seniors a home shows, and how often it shows one person's two records: over
    the homes (a street address or landline held by fewer than ``SHARED_HOLDERS``; not one
    employer's office), every pair once."""
    holders: dict[str, list[Profile]] = defaultdict(list)
    for p in profiles:
        for value in _home_values(p):
            holders[value].append(p)
    small = {value for value, members in holders.items() if len(members) < SHARED_HOLDERS}
    seen: set[tuple[str, str]] = set()
    two_people = 0
    for value in small:
        named = [p for p in holders[value] if p.first and p.last and p.mobile]
        for x, a in enumerate(named):
            for b in named[x + 1 :]:
                key = (a.id, b.id) if a.id < b.id else (b.id, a.id)
                if (a.first, a.last) != (b.first, b.last) or key in seen or _one_employer(a, b):
                    continue
                seen.add(key)
                two_people += field_levels(a.values(), b.values())[MOBILE] == "different"
    sure = sure_at_home = 0
    by_rule: dict[str, list[Profile]] = defaultdict(list)
    for p in profiles:
        value = NAME_AND_MOBILE.value(p, p.mobile)
        if value:
            by_rule[value].append(p)
    for members in by_rule.values():
        if len(members) >= SHARED_HOLDERS:
            continue
        for x, a in enumerate(members):
            homes = small.intersection(_home_values(a))
            for b in members[x + 1 :]:
                if not _one_employer(a, b):
                    sure += 1
                    sure_at_home += not homes.isdisjoint(_home_values(b))
    mobiles = sum(1 for p in profiles if p.mobile)
    return NamesakeCount(len(profiles), mobiles, two_people, sure, sure_at_home)


def namesakes_at_home(count: NamesakeCount) -> float:
    """Other contacts of one's own full name at one's home, per contact
    (``explained.Explained.namesakes_at_home``), from the counts alone.

    A home shows on both records of a pair holding a mobile each as often as on one person's
    two such records (``sure_at_home / sure``), so the juniors and seniors a home shows
    (``two_people``) are that share of those holding a mobile each; two people hold a mobile
    each as often as two contacts do (``(mobiles / contacts) ** 2``). Shrunk towards
    ``NAMESAKES_AT_HOME`` by ``NAMESAKE_PRIOR_PAIRS`` pseudo-pairs against the ``two_people``
    pairs the estimate rests on. Measured on the generated CRM: 373 pairs estimated of 320 (20k), 1,456
    of 1,623 (100k), where the documented share says 750 and 3,750."""
    if not (count.two_people and count.sure_at_home and count.mobiles):
        return NAMESAKES_AT_HOME
    both_mobile = (count.mobiles / count.contacts) ** 2
    housemates = count.two_people * count.sure / count.sure_at_home / both_mobile
    measured = 2.0 * housemates / count.contacts
    weight = count.two_people
    prior = NAMESAKE_PRIOR_PAIRS
    return (weight * measured + prior * NAMESAKES_AT_HOME) / (weight + prior)


def household_share(homes: HomeCount) -> float:
    """P(two different people at one home share a surname), from the counts alone.

    Of the same-surname pairs, ``same_dob / dated / PRIORS["dob"].exact`` are one person; one
    person's two records share a surname ``PRIORS["last"].exact`` of the time, so the home
    pairs that are one person are those over it. The families are the rest of the same-surname
    pairs, over the rest of the pairs. Shrunk towards ``HOUSEHOLD_SURNAME_SHARE`` by
    ``PRIOR_PAIRS`` pseudo-pairs against the ``dated`` pairs the estimate rests on."""
    if not homes.dated:
        return HOUSEHOLD_SURNAME_SHARE
    one_person = homes.same_surname * min(homes.same_dob / homes.dated / PRIORS["dob"].exact, 1.0)
    families = homes.same_surname - one_person
    two_people = homes.pairs - one_person / PRIORS["last"].exact
    measured = min(families / two_people, 1.0) if two_people > 0 else 0.0
    return (homes.dated * measured + PRIOR_PAIRS * HOUSEHOLD_SURNAME_SHARE) / (
        homes.dated + PRIOR_PAIRS
    )


def explained_by(counts: DependenceCounts) -> Explained:
    """The floors dm-score uses (``weights.Explained``): each implication's counted share and
    the households', shrunk as the module says."""

    def shrunk(count: PlaceCount, towards: float) -> float:
        return (count.agree + PRIOR_PAIRS * towards) / (count.pairs + PRIOR_PAIRS)

    nesting = shrunk(counts.places[NESTING], IMPLIED_SHARE)
    places = {
        (a, b): shrunk(count, nesting if a == "address" else IMPLIED_SHARE)
        for (a, b), count in counts.places.items()
    }
    return Explained(places, household_share(counts.homes), namesakes_at_home(counts.namesakes))
