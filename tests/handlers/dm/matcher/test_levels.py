"""Field comparisons as person registers get them wrong: names in each other's fields with one
of them changed, a mistyped state, a house number on another street."""

from __future__ import annotations

import math

import pytest

from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.levels import field_levels
from handlers.duplicate_merger.matcher.profile import FIELDS, Profile
from handlers.duplicate_merger.matcher.scored import ScoredPair, Term, explain
from handlers.duplicate_merger.matcher.scorer import Scorer
from handlers.duplicate_merger.matcher.weights import IMPLIED_SHARE, PRIORS

THRESHOLDS = Thresholds(automatic=12.0, propose=0.0)


def _counts(**by_field: int) -> list[int]:
    return [by_field.get(f, 1) for f in FIELDS]


def _levels(a: Profile, b: Profile) -> dict[str, str | None]:
    return dict(zip(FIELDS, field_levels(a.values(), b.values()), strict=True))


def _term(pair: ScoredPair, name: str) -> tuple[str, float]:
    term = next(t for t in pair.terms if t.field == name)
    return term.level, term.weight


# FEBRL3's rec-725: the names entered the other way round, the surname also mistyped and the
# given name replaced.
ORIGINAL = Profile("rec-725-org", first="victoria", last="pulford", house="7",
                   street="summerville crescent", city="black rock", postcode="2315", state="vic")
SWAPPED = Profile("rec-725-dup-0", first="pulfrd", last="cassandra", house="7",
                  street="summerville crescent", city="black rock", postcode="2315", state="vic")


def test_one_name_in_the_other_field_counts_as_a_swapped_agreement() -> None:
    levels = _levels(ORIGINAL, SWAPPED)
    assert (levels["first"], levels["last"]) == ("different", "swapped")
    scorer = Scorer(5_000, THRESHOLDS, -11.0)
    counts = _counts(first=20, last=2, house=200, street=2, city=3, postcode=3, state=1200)
    pair = scorer.score(ORIGINAL, counts, SWAPPED, counts)
    last_level, last_weight = _term(pair, "last")
    first_level, first_weight = _term(pair, "first")
    assert last_level == "swapped" and last_weight > 0
    assert first_level == "different" and first_weight == pytest.approx(
        math.log2(PRIORS["first"].differ)
    )
    assert "a name in the other name field" in pair.explanation
    assert "first and last name swapped" not in pair.explanation
    # the given name still differs at one home: a person decides
    assert pair.band != "automatic" and "different first name" in pair.explanation


def test_one_crossed_name_counts_as_common_as_it_is_in_either_field() -> None:
    """"james" as one record's given name and the other's surname: common as a given name,
    so it weighs what a common name weighs."""
    a = Profile("1", first="james", last="okafor")
    b = Profile("2", first="david", last="james")
    scorer = Scorer(10_000, THRESHOLDS, -14.0)
    rare = scorer.score(a, _counts(first=2, last=1), b, _counts(first=2, last=2))
    common = scorer.score(a, _counts(first=300, last=1), b, _counts(first=2, last=2))
    assert _term(common, "last")[0] == "swapped"
    assert _term(common, "last")[1] == pytest.approx(math.log2(PRIORS["last"].exact * 10_000 / 300))
    assert _term(common, "last")[1] < _term(rare, "last")[1]


def test_both_names_crossed_with_a_typo_count_as_swapped() -> None:
    """Neither name agrees exactly crossed ("smyth jon" for "john smith"), but both do
    similarly, and neither agrees as entered."""
    levels = _levels(Profile("1", first="john", last="smith"), Profile("2", first="smyth", last="jon"))
    assert (levels["first"], levels["last"]) == ("swapped", "swapped")


def test_names_that_agree_neither_way_stay_different() -> None:
    levels = _levels(Profile("1", first="ann", last="lee"), Profile("2", first="zoe", last="park"))
    assert (levels["first"], levels["last"]) == ("different", "different")


@pytest.mark.parametrize(
    ("a", "b", "level"),
    [("qld", "qdl", "similar"), ("qld", "qlf", "similar"), ("california", "califronia", "similar"),
     ("nsw", "vic", "different"), ("wa", "va", "different"), ("sa", "wa", "different"),
     ("qld", "qld", "exact")],
)
def test_a_mistyped_state_is_not_another_state(a: str, b: str, level: str) -> None:
    assert _levels(Profile("1", state=a), Profile("2", state=b))["state"] == level


def test_a_mistyped_state_weighs_nothing_either_way() -> None:
    scorer = Scorer(5_000, THRESHOLDS, -11.0)
    a, b = Profile("1", first="finlay", state="qld"), Profile("2", first="finlay", state="qdl")
    pair = scorer.score(a, _counts(first=3, state=1500), b, _counts(first=3, state=1))
    assert _term(pair, "state") == ("similar", 0.0)


def test_a_house_number_on_another_street_is_not_evidence() -> None:
    """FEBRL3's rec-1698 and rec-79: two Elizas at number 8, of two streets. The house field's
    count is the whole address's (``Rarity``): one contact holds "8 diamond street", which
    says nothing of how many hold an 8."""
    scorer = Scorer(5_000, THRESHOLDS, -11.0)
    counts = _counts(first=4, last=1, house=1, street=1)
    eliza = Profile("1", first="eliza", last="stubbs", house="8", street="diamond street")
    other = Profile("2", first="eliza", last="haack", house="8", street="castleton crescent")
    unknown = Profile("3", first="eliza", last="haack", house="8")
    explained = math.log2(PRIORS["house"].exact / IMPLIED_SHARE)
    for b in (other, unknown):
        outcome, weight = _term(scorer.score(eliza, counts, b, counts), "house")
        assert outcome == "exact" and weight == pytest.approx(explained)
    # on one street the address agrees, and its count says how rare it is
    same_street = Profile("4", first="eliza", last="haack", house="8", street="diamond street")
    assert _term(scorer.score(eliza, counts, same_street, counts), "house")[1] == pytest.approx(
        math.log2(PRIORS["house"].exact * 5_000 / 1)
    )


def test_a_house_number_on_another_street_reads_as_a_house_number() -> None:
    number = Term("house", True, "exact", 0.0002, 9.0)
    assert explain([number, Term("street", False, "different", 0.0, -3.6)], 5_000) == (
        "same house number, different street"
    )
    assert explain([number], 5_000) == "same house number"  # no street on one side
    assert explain([number, Term("street", True, "exact", 0.0002, 0.8)], 5_000) == (
        "same address, same street"
    )


@pytest.mark.parametrize(
    ("given", "phrase"),
    [
        ("bob", "first name as a nickname"),
        ("r", "first name as an initial"),
        ("robrt", "similar first name"),  # a typo
    ],
)
def test_the_line_says_how_a_given_name_differs(given: str, phrase: str) -> None:
    scorer = Scorer(20_000, Thresholds(automatic=12.0, propose=0.0), -16.0)
    counts = [1] * len(FIELDS)
    a = Profile("a", first="robert", last="kowalczyk", email="robert@acme.com")
    b = Profile("b", first=given, last="kowalczyk", email="rk@gmail.com")
    line = scorer.score(a, counts, b, counts).explanation
    assert phrase in line.split(", "), line


def test_a_name_in_the_other_field_is_as_common_as_that_name() -> None:
    # "Samuel Griffith" and "Griffith Samuel": each crossed name is counted as itself, as a
    # given name or a surname, whichever is larger. Samuel is a common given name (900 of
    # 100,000) and a rare surname (3); Griffith a rare surname (8) and given name (1).
    straight = Profile("1", first="samuel", last="griffith", city="miami", state="fl")
    crossed = Profile("2", first="griffith", last="samuel", city="new york", state="ny")
    assert _levels(straight, crossed)["first"] == "swapped"
    scorer = Scorer(100_000, THRESHOLDS, -20.0)
    pair = scorer.score(straight, _counts(first=900, last=8), crossed, _counts(first=1, last=3))
    shares = {t.field: t.rarity for t in pair.terms if t.field in ("first", "last")}
    # first: straight's given name read against crossed's surname (Samuel: 900 and 3);
    # last: straight's surname read against crossed's given name (Griffith: 8 and 1).
    assert shares == {"first": pytest.approx(900 / 100_000), "last": pytest.approx(8 / 100_000)}
