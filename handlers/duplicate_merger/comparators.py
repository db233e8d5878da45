"""How two values of one field compare: ``exact``, ``similar``, ``swapped`` or ``different``.

The first step of scoring a pair (``evidence.Scorer``): each field present on both contacts
gets a level, from its values alone. A similar value is one typo, a nickname, another format;
a swapped name is one entered in the other name field. Each comparator is a pure function of
two normalised values, cached: common names and cities meet each other again and again across
pairs. What a level weighs is for the later steps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Literal

from handlers.common.strings import jaro_winkler
from handlers.duplicate_merger.normalize import email_domain, is_role_mailbox, nickname_related
from handlers.duplicate_merger.profile import (
    DOB,
    DOMAIN,
    EMAIL,
    FIELDS,
    FIRST,
    HOUSE,
    LAST,
    MOBILE,
    PHONE,
    STREET,
)
from handlers.duplicate_merger.similarity import within_one_edit

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
    (``_swap_names``), and birth dates that do not agree. The pairs ``dependence`` counts."""
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
