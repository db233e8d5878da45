"""How two contacts compare: each field's level, and what the levels say of the pair.

The first step of scoring a pair (``scorer.Scorer``): each field present on both contacts
gets a level (``exact``, ``similar``, ``swapped`` or ``different``) from its values alone. A
similar value is one typo, a nickname, another format; a swapped name is one entered in the
other name field. Each comparator is a pure function of two normalised values, cached: common
names and cities meet each other again and again across pairs. From the levels alone follow
the pair's context (``pair_context``), its evidence class (``evidence_class``) and what keeps
it from merging without a person (``automatic_vetoes``). What a level weighs is ``weights``'.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Literal

from handlers.common.strings import jaro_winkler
from handlers.duplicate_merger.matcher.normalize import (
    email_domain,
    is_role_mailbox,
    nickname_graph,
)
from handlers.duplicate_merger.matcher.profile import (
    COMPANY,
    DOB,
    DOMAIN,
    EMAIL,
    FIELDS,
    FIRST,
    GENERATION,
    HOUSE,
    LAST,
    MOBILE,
    PHONE,
    STREET,
)

Level = Literal["exact", "similar", "swapped", "different"]

AGREE: tuple[Level, ...] = ("exact", "similar")
NAMED: tuple[Level, ...] = ("exact", "similar", "swapped")
"""The levels at which a name agrees (a swapped name is the same name in the other field)."""


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


def within_one_edit(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by at most one insertion, deletion, substitution or
    swap of two adjacent characters (Damerau-Levenshtein distance <= 1). Written here, not
    taken from jellyfish (``handlers.common.strings``): a few comparisons with an early exit on
    the short strings a contact has (postcodes, dates, phone digits) cost less than a full
    edit distance."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la > lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    if la == lb:
        if a[i + 1 :] == b[i + 1 :]:
            return True  # one substitution
        return i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
    return a[i:] == b[i + 1 :]  # one insertion into the shorter string


@lru_cache(maxsize=65_536)
def nickname_related(a: str, b: str) -> bool:
    """Whether two given names are one name in the data set (Bob/Robert, Jon/Jonathan), two
    nicknames of one formal name (Bill/Will, both William), or an initial and a name it
    starts ("a" and "ann"). Never longer chains: Jon-John-Jack would join too much."""
    if not a or not b or a == b:
        return bool(a) and a == b
    if len(a) == 1 or len(b) == 1:
        return a[0] == b[0]
    related, formal = nickname_graph()
    if b in related.get(a, ()):
        return True
    return bool(formal.get(a, frozenset()) & formal.get(b, frozenset()))


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


def same_org_domain(a: str, b: str) -> bool:
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
    if same_org_domain(a, b):
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


def retyped_date_part(a: str, b: str) -> bool:
    """Two birth dates (``YYYYMMDD``) more than one digit apart that agree on two of year,
    month and day: the third was retyped ("1935" for "1995", day "28" for "12"). Read whole,
    such a date differs, the strongest evidence against a pair; a register's duplicates carry
    their one error there as often as in a name (RLdata10000: 307 of its 1,000 true pairs)."""
    agree = (a[:4] == b[:4]) + (a[4:6] == b[4:6]) + (a[6:8] == b[6:8])
    return agree == 2 and not within_one_edit(a, b)


def _dob_level(a: str, b: str) -> Level:
    """Birth dates: one digit off or swapped, day and month swapped, or one part retyped."""
    if a == b:
        return "exact"
    if within_one_edit(a, b):
        return "similar"
    if a[:4] == b[:4] and a[4:6] == b[6:8] and a[6:8] == b[4:6]:
        return "similar"
    return "similar" if retyped_date_part(a, b) else "different"


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


def _swap_names(av: Sequence[str], bv: Sequence[str], levels: list[Level | None]) -> None:
    """First and last name entered the other way round count as agreement on both: when the
    crossed reading has more exact names than the straight one, or when both names differ as
    entered and both agree crossed (a typo in either, "smyth jon" for "john smith"). When both
    differ as entered and only one agrees crossed, the other was changed too
    (``_one_name_crossed``)."""
    if levels[FIRST] == "exact" and levels[LAST] == "exact":
        return
    a_first, a_last, b_first, b_last = av[FIRST], av[LAST], bv[FIRST], bv[LAST]
    cross_one = _name_level(a_first, b_last) if a_first and b_last else "different"
    cross_two = _name_level(a_last, b_first) if a_last and b_first else "different"
    if cross_one == "different" and cross_two == "different":
        return
    if levels[FIRST] == "different" and levels[LAST] == "different":
        if cross_one != "different" and cross_two != "different":
            levels[FIRST] = levels[LAST] = "swapped"
        else:
            _one_name_crossed(levels)
        return
    if cross_one == "different" or cross_two == "different":
        return
    straight = (levels[FIRST] == "exact") + (levels[LAST] == "exact")
    crossed = (cross_one == "exact") + (cross_two == "exact")
    if crossed > straight:
        levels[FIRST] = levels[LAST] = "swapped"


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
    levels[LAST] = "swapped"


def crossed_name_count(
    term: int,
    levels: Sequence[Level | None],
    av: Sequence[str],
    bv: Sequence[str],
    a_counts: Sequence[int],
    b_counts: Sequence[int],
) -> int:
    """How many contacts hold the name a ``swapped`` term agrees on, as that name's count.

    The ``FIRST`` term is one record's given name read against the other's surname, the
    ``LAST`` term its surname against the other's given name (where only one name crossed,
    ``_one_name_crossed``, whichever crossing agrees). A name entered in the other field is
    the same name, so it is as common as the name is as either: the larger of its two counts
    ("Samuel Griffith" / "Griffith Samuel": Samuel's count for one term, Griffith's for the
    other, not Samuel's for both). A crossing that agrees only up to a typo cannot say which
    spelling is the name: it takes the largest of the four counts."""
    crossings = [(FIRST, LAST)] if term == FIRST else [(LAST, FIRST)]
    if term == LAST and levels[FIRST] != "swapped":
        crossings.append((FIRST, LAST))
    for x, y in crossings:
        if av[x] and av[x] == bv[y]:
            return max(a_counts[x], b_counts[y])
    return max(a_counts[FIRST], a_counts[LAST], b_counts[FIRST], b_counts[LAST])


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
    if levels[EMAIL] == "exact":
        levels[DOMAIN] = None
    if levels[MOBILE] != "exact" and levels[PHONE] != "exact" and _crossed_phone(av, bv):
        levels[MOBILE], levels[PHONE] = "exact", None
    return levels


def different_people(av: Sequence[str], bv: Sequence[str]) -> bool:
    """Whether two profiles' values (``Profile.values()``) are two people as far as their names
    and birth dates tell: both names on both, different as entered and crossed
    (``_swap_names``), and birth dates that do not agree. The pairs ``counted.count_dependence`` counts."""
    a_first, a_last, b_first, b_last = av[FIRST], av[LAST], bv[FIRST], bv[LAST]
    if not (a_first and a_last and b_first and b_last):
        return False
    for x, y in ((a_last, b_last), (a_first, b_last), (a_last, b_first)):
        if _name_level(x, y) != "different":
            return False
    if _first_level(a_first, b_first) != "different":
        return False
    return not (av[DOB] and bv[DOB] and _dob_level(av[DOB], bv[DOB]) != "different")


def _crossed_phone(av: Sequence[str], bv: Sequence[str]) -> bool:
    """One record's ``phone`` is the other's ``mobilephone``: a mobile typed into the phone
    field (many forms ask for one number). It counts as the same mobile."""
    return bool(av[PHONE] and av[PHONE] == bv[MOBILE]) or bool(
        av[MOBILE] and av[MOBILE] == bv[PHONE]
    )


def crossed_count(
    av: Sequence[str], bv: Sequence[str], a_counts: Sequence[int], b_counts: Sequence[int]
) -> int:
    """Contacts holding a crossed number (``_crossed_phone``), in either field."""
    if av[PHONE] and av[PHONE] == bv[MOBILE]:
        return a_counts[PHONE] + b_counts[MOBILE]
    return a_counts[MOBILE] + b_counts[PHONE]


def shared_home(levels: Sequence[Level | None]) -> bool:
    """Whether two contacts share a home: the same phone (a landline) or street address."""
    return levels[PHONE] == "exact" or (
        levels[HOUSE] == "exact" and levels[STREET] in AGREE
    )


Context = Literal["one", "other", "unknown", "home"]
"""Which context of a life two records come from, as far as their fields tell
(``pair_context``): ``one`` (an identifier agrees, or neither record holds any), ``other``
(identifiers on both, all different), ``unknown`` (no identifier on both records, one on
either) or ``home`` (one home, ``shared_home``: the same street address or landline; an
office's address or main line reads the same way)."""

IDENTIFIERS = (EMAIL, PHONE, COMPANY, DOMAIN)
"""The fields that name a context of a life: a mailbox, a phone, an employer and its domain."""


def one_handle_two_mailboxes(a: str, b: str) -> bool:
    """Two mailboxes of one handle at two providers (``gilda.collins@`` a firm's and Gmail's),
    which ``_email_level`` reads as similar: a person's work and personal mailboxes, two
    contexts of a life, where a mailbox one edit from another is one mailbox mistyped."""
    return a != b and not within_one_edit(a, b)


def pair_context(levels: Sequence[Level | None], av: Sequence[str], bv: Sequence[str]) -> Context:
    """The context two records come from (``Context``), from their levels and values: one home
    first (its address or landline holds one context), then any identifier that agrees (one
    context), then identifiers on both that all differ (other contexts). One handle at two
    providers differs as a context (``one_handle_two_mailboxes``): read as one context, a work
    and a personal record of one person lost 3.6 bits to their two cities where two unrelated
    mailboxes cost them nothing."""
    if shared_home(levels):
        return "home"
    differs = False
    for i in IDENTIFIERS:
        level = levels[i]
        if level == "different" or (
            i == EMAIL and level == "similar" and one_handle_two_mailboxes(av[i], bv[i])
        ):
            differs = True
        elif level is not None:
            return "one"
    if differs:
        return "other"
    if any(av[i] or bv[i] for i in IDENTIFIERS):
        return "unknown"
    return "one"  # a person register: no record holds a contact identifier


EVIDENCE_CLASSES = ("person", "employer", "home", "name")
"""What a pair's agreement rests on, strongest kind first (``evidence_class``): a personal
identifier (``person``), an employer (``employer``), a home (``home``), or the name and place
alone (``name``). Reviewer decisions are counted per class, so a CRM whose reviewer rejects
the pairs an employer explains raises the bands of that class only (``calibration``)."""


def evidence_class(levels: Sequence[Level | None], email: str = "") -> str:
    """The strongest kind of fact two contacts agree on (``EVIDENCE_CLASSES``): the same
    personal mailbox, mobile or birth date; else the same employer (company or domain); else
    the same home (phone or street address); else only their name and place."""
    if (levels[EMAIL] == "exact" and not is_role_mailbox(email)) or levels[MOBILE] == "exact" or (
        levels[DOB] == "exact"
    ):
        return "person"
    if levels[COMPANY] in AGREE or levels[DOMAIN] == "exact":
        return "employer"
    if shared_home(levels):
        return "home"
    return "name"


HISTORICAL_BEFORE = "1850"
"""Birth years before this are a historical register's (transcribed parish, census or
genealogy records), where one date is often no person's own: an age turned into a year, a
baptism or a burial entered as the birth, one family's cousins named after one grandparent.
dm reads such dates (``normalize.birth_date``), but they never merge a pair on their own:
issue 43 counted 51 false automatic merges in 120,733 on historical register data once they
were read, none before."""


def historical(av: Sequence[str], bv: Sequence[str]) -> bool:
    """Whether either record's birth date is before ``HISTORICAL_BEFORE``."""
    return any(v[DOB] and v[DOB][:4] < HISTORICAL_BEFORE for v in (av, bv))


def automatic_vetoes(levels: Sequence[Level | None], *, old_dates: bool = False
                     ) -> tuple[str, ...]:
    """Why a pair may not merge without a person, however high it scores: a fact one person's
    records do not differ in (birth date, generational suffix), a different given name at
    one home (two members of one family, whatever else the home explains), or a birth date
    before ``HISTORICAL_BEFORE`` (``old_dates``)."""
    reasons: list[str] = []
    if old_dates:
        reasons.append(f"a birth date before {HISTORICAL_BEFORE}")
    if levels[DOB] == "different":
        reasons.append("different date of birth")
    if levels[GENERATION] == "different":
        reasons.append("different generational suffix")
    if levels[FIRST] == "different" and shared_home(levels):
        reasons.append("different first name at one home")
    return tuple(reasons)
