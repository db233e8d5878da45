"""Agreements that explain others, counted per CRM (issue 15): place nesting, households."""

from __future__ import annotations

import json
import math

import pytest

from handlers.duplicate_merger.bands import Thresholds
from handlers.duplicate_merger.comparators import different_people
from handlers.duplicate_merger.contexts import PRIOR_PAIRS
from handlers.duplicate_merger.dependence import (
    DependenceCounts,
    HomeCount,
    PlaceCount,
    count_dependence,
    explained_by,
    household_share,
)
from handlers.duplicate_merger.evidence import Scorer
from handlers.duplicate_merger.explained import (
    DOCUMENTED,
    HOUSEHOLD_SURNAME_SHARE,
    IMPLIED_SHARE,
    PLACE_IMPLICATIONS,
    Explained,
)
from handlers.duplicate_merger.field_priors import PRIORS
from handlers.duplicate_merger.pipeline import (
    MessageError,
    decode_message,
    encode_messages,
    run_blocking,
)
from handlers.duplicate_merger.profile import Profile

THRESHOLDS = Thresholds(automatic=12.0, propose=0.0)
GIVEN = ("ann", "bob", "carl", "dora", "emil", "fay", "gus", "hana", "ivan", "jo")
SURNAMES = ("kowal", "lind", "moss", "nagy", "ortiz", "pike", "quinn", "roth", "sato", "tull")


def _register(n: int, **fields: str) -> Profile:
    """A person-register record whose names differ from the next record's."""
    return Profile(f"{n:04}", first=GIVEN[n % 10], last=SURNAMES[3 * n % 10], **fields)


def _places_apart(n: int) -> list[Profile]:
    """Different people at one postcode, each in a city of their own: fields drawn apart."""
    return [_register(i, postcode="2600", city=f"town{i}", state=f"s{i % 7}") for i in range(n)]


def _places_nested(n: int) -> list[Profile]:
    """Different people at one postcode, all in its one city and state."""
    return [_register(i, postcode="2600", city="canberra", state="act") for i in range(n)]


def test_different_people_are_told_apart_by_names_and_birth_dates() -> None:
    ann = Profile("1", first="ann", last="kowal", dob="19800101").values()
    assert different_people(ann, Profile("2", first="bob", last="lind").values())
    assert not different_people(ann, Profile("2", first="anne", last="lind").values())  # a typo
    assert not different_people(ann, Profile("2", first="kowal", last="ann").values())  # swapped
    assert not different_people(ann, Profile("2", first="bob", last="lind", dob="19800101").values())
    assert not different_people(ann, Profile("2", first="bob").values())  # no surname to tell


def test_places_drawn_apart_are_counted_as_such_and_weigh_again() -> None:
    apart = explained_by(count_dependence(_places_apart(200)))
    nested = explained_by(count_dependence(_places_nested(200)))
    # 199 pairs of two people, none in one city: the count outweighs the documented prior.
    assert apart.places["postcode", "city"] == pytest.approx(
        PRIOR_PAIRS * IMPLIED_SHARE / (199 + PRIOR_PAIRS)
    )
    assert nested.places["postcode", "city"] == pytest.approx(
        (199 + PRIOR_PAIRS * IMPLIED_SHARE) / (199 + PRIOR_PAIRS)
    )
    # No two people share an address here: the address's shares follow the postcode's city.
    assert apart.places["address", "city"] == pytest.approx(apart.places["postcode", "city"])
    assert nested.places["address", "postcode"] == pytest.approx(nested.places["postcode", "city"])

    # One person's two records at one postcode, agreeing on its city: news where the places
    # were drawn apart, none (less than the documented half-share) where they nest.
    a = Profile("a", first="zed", last="kowal", postcode="2600", city="town1")
    b = Profile("b", first="zed", last="kowal", postcode="2600", city="town1")
    counts = [1] * 14
    counts[9] = counts[10] = 2  # city, postcode: held by these two
    scores = {
        name: Scorer(1_000, THRESHOLDS, -10.0, explained=measured).score(a, counts, b, counts)
        for name, measured in (("apart", apart), ("nested", nested), ("documented", DOCUMENTED))
    }
    city = {name: next(t.weight for t in s.terms if t.field == "city") for name, s in scores.items()}
    assert city["apart"] == pytest.approx(
        math.log2(PRIORS["city"].exact / apart.places["postcode", "city"])
    )
    assert city["apart"] > 4.0 > city["documented"] > city["nested"] == 0.0


def test_a_crm_without_households_reads_a_shared_surname_at_one_address_as_the_person() -> None:
    # Pairs at one address with one surname that share a birth date: one person's records.
    people = []
    for i in range(60):
        house = str(i)
        people += [
            Profile(f"{i:03}a", first="zed", last=f"kowal{i}", house=house, street="main street",
                    dob="19800101"),
            Profile(f"{i:03}b", first="zedd", last=f"kowal{i}", house=house, street="main street",
                    dob="19800101"),
        ]
    homes = count_dependence(sorted(people, key=lambda p: p.id)).homes
    assert homes == HomeCount(pairs=60, same_surname=60, dated=60, same_dob=60)
    assert household_share(homes) == pytest.approx(
        PRIOR_PAIRS * HOUSEHOLD_SURNAME_SHARE / (60 + PRIOR_PAIRS)
    )
    # Families: one surname at one address, never one birth date.
    families = HomeCount(pairs=60, same_surname=60, dated=60, same_dob=0)
    assert household_share(families) == pytest.approx(
        (60 * 1.0 + PRIOR_PAIRS * HOUSEHOLD_SURNAME_SHARE) / (60 + PRIOR_PAIRS)
    )
    assert household_share(HomeCount(500, 50, 0, 0)) == HOUSEHOLD_SURNAME_SHARE  # no dates

    # A shared surname at one address weighs what the counted households say.
    a = Profile("a", first="mary", last="kowal", house="8", street="main street", dob="19800101")
    b = Profile("b", first="olga", last="kowal", house="8", street="main street", dob="19811101")
    counts = [1] * 14
    counted = Explained(household_surname=household_share(homes))
    gain = (Scorer(1_000, THRESHOLDS, -10.0, explained=counted).score(a, counts, b, counts).score
            - Scorer(1_000, THRESHOLDS, -10.0).score(a, counts, b, counts).score)
    assert gain == pytest.approx(math.log2(HOUSEHOLD_SURNAME_SHARE / household_share(homes)))


def test_coworkers_and_one_mailbox_are_not_a_household() -> None:
    office = dict(house="1", street="market street", company="acme")
    people = [
        Profile("1", first="ann", last="kowal", **office),
        Profile("2", first="bob", last="kowal", **office),          # coworkers, one surname
        Profile("3", first="cy", last="lind", email="cy@lind.net", house="9", street="elm road"),
        Profile("4", first="cyd", last="lind", email="cy@lind.net", house="9", street="elm road"),
        Profile("5", first="dora", last="moss", house="9", street="elm road"),
    ]
    # Only 4 and 5 (two people at one home, no mailbox or employer in common) are counted.
    assert count_dependence(people).homes == HomeCount(pairs=1, same_surname=0, dated=0, same_dob=0)


def test_the_counts_travel_in_every_block_message_and_are_checked() -> None:
    (body,) = encode_messages(run_blocking("2026-W32", _places_apart(30), cap=50))
    data = json.loads(body)
    wire = data["dependence"]
    assert wire["postcode>city"] == [0, 29] and wire["homes"] == [0, 0, 0, 0]
    message = decode_message(body)
    assert message.dependence == DependenceCounts.from_wire(wire)
    assert set(message.dependence.places) == set(PLACE_IMPLICATIONS)
    for broken in (
        {k: v for k, v in data.items() if k != "dependence"},            # no counts
        {**data, "dependence": {**wire, "postcode>city": [30, 29]}},     # more agree than pairs
        {**data, "dependence": {**wire, "homes": [1, 2, 0, 0]}},         # not nested
        {**data, "dependence": {k: v for k, v in wire.items() if k != "city>state"}},
        {**data, "dependence": {**wire, "homes": [0, 0, 0]}},
    ):
        with pytest.raises(MessageError):
            decode_message(json.dumps(broken))


def test_place_counts_round_trip() -> None:
    counts = DependenceCounts(
        {imp: PlaceCount(i, 2 * i + 1) for i, imp in enumerate(PLACE_IMPLICATIONS)},
        HomeCount(9, 5, 3, 1),
    )
    assert DependenceCounts.from_wire(json.loads(json.dumps(counts.to_wire()))) == counts
