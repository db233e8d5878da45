"""The peers' blocking budget (``benchmarks/peers.py``: ``comparisons``, ``within_budget``)."""

from __future__ import annotations

from benchmarks.peers import comparisons, within_budget
from handlers.duplicate_merger.matcher import Profile


def _office(n: int) -> list[Profile]:
    """``n`` coworkers on one main line, two surnames, and one contact with no phone."""
    people = [
        Profile(str(i), first=f"p{i}", last="kowal" if i % 2 else "nowak", phone="+16175550100")
        for i in range(n)
    ]
    return [*people, Profile("x", first="ann", last="kowal")]


def test_a_rule_makes_a_pair_per_two_records_of_a_block_and_none_for_a_missing_value() -> None:
    office = _office(10)
    assert comparisons(office, ("phone",)) == 45  # 10 * 9 / 2; the contact without one joins none
    assert comparisons(office, ("phone", "last")) == 2 * 10  # two blocks of five
    assert comparisons(office, ("last",)) == 15 + 10  # six kowal (with ann), five nowak


def test_rules_within_the_budget_stay_as_given() -> None:
    rules = [("phone",), ("first", "last")]
    assert within_budget(_office(10), rules, budget=45) == (rules, "")


def test_the_rule_making_the_most_pairs_is_made_stricter_until_the_rules_fit() -> None:
    rules, note = within_budget(_office(10), [("first", "last"), ("phone",)], budget=44)
    assert rules == [("first", "last"), ("phone", "last")]
    assert note == "phone (45 pairs) -> phone+last"
    # Nothing left to tighten: the rules stay as strict as they can be made, over the budget.
    assert within_budget(_office(10), [("phone",)], budget=0)[0] == [("phone", "last")]
