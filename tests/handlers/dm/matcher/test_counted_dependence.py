"""Agreements that explain others, counted per CRM (issue 15): place nesting, households."""

from __future__ import annotations

import json
import math

import pytest

from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.counted import (
    NAMESAKE_PRIOR_PAIRS,
    PRIOR_PAIRS,
    DependenceCounts,
    HomeCount,
    NamesakeCount,
    PlaceCount,
    count_dependence,
    count_namesakes,
    explained_by,
    household_share,
    namesakes_at_home,
)
from handlers.duplicate_merger.matcher.levels import different_people
from handlers.duplicate_merger.matcher.profile import Profile
from handlers.duplicate_merger.matcher.scorer import Scorer
from handlers.duplicate_merger.matcher.weights import (
    DOCUMENTED,
    HOUSEHOLD_SURNAME_SHARE,
    IMPLIED_SHARE,
    NAMESAKES_AT_HOME,
    PLACE_IMPLICATIONS,
    PRIORS,
    Explained,
)
from handlers.duplicate_merger.pipeline import (
    MessageError,
    decode_message,
    encode_messages,
    run_blocking,
)

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
        {**data, "dependence": {k: v for k, v in wire.items() if k != "namesakes"}},
        {**data, "dependence": {**wire, "namesakes": [10, 11, 0, 0, 0]}},  # more mobiles
        {**data, "dependence": {**wire, "namesakes": [10, 5, 1, 2, 3]}},   # home beyond sure
    ):
        with pytest.raises(MessageError):
            decode_message(json.dumps(broken))


def test_place_counts_round_trip() -> None:
    counts = DependenceCounts(
        {imp: PlaceCount(i, 2 * i + 1) for i, imp in enumerate(PLACE_IMPLICATIONS)},
        HomeCount(9, 5, 3, 1),
        NamesakeCount(1000, 600, 4, 50, 7),
    )
    assert DependenceCounts.from_wire(json.loads(json.dumps(counts.to_wire()))) == counts


def _juniors_and_seniors(households: int, sure_pairs: int, at_home: int) -> list[Profile]:
    """``households`` homes each holding a junior and a senior (one full name, two mobiles), and
    ``sure_pairs`` people with two records of one full name and mobile, ``at_home`` of them
    with one street address on both."""
    people = []
    for i in range(households):
        home = dict(first=f"zed{i}", last="kowal", house=str(i), street="elm road")
        people += [Profile(f"h{i:03}a", mobile=f"+1212{i:07}", **home),
                   Profile(f"h{i:03}b", mobile=f"+1917{9999999 - i:07}", **home)]
    for i in range(sure_pairs):
        one = dict(first=f"ann{i}", last="lind", mobile=f"+1555{3000000 + i:07}")
        home = dict(house=str(i), street="oak lane") if i < at_home else {}
        people += [Profile(f"s{i:03}a", **one, **home), Profile(f"s{i:03}b", **one, **home)]
    return sorted(people, key=lambda p: p.id)


def test_juniors_and_seniors_at_one_home_are_counted_per_crm() -> None:
    people = _juniors_and_seniors(households=40, sure_pairs=100, at_home=20)
    # Coworkers of one name at their office and one person's two records are not two people.
    office = dict(first="bo", last="nagy", house="1", street="market street", company="acme")
    people += [Profile("c1", mobile="+13125550101", **office),
               Profile("c2", mobile="+16465558822", **office),
               Profile("p1", first="cy", last="moss", mobile="+15554000001", house="7",
                       street="pine way"),
               Profile("p2", first="cy", last="moss", mobile="+15554000001", house="7",
                       street="pine way")]
    count = count_namesakes(sorted(people, key=lambda p: p.id))
    assert count == NamesakeCount(contacts=284, mobiles=284, two_people=40, sure=101,
                                  sure_at_home=21)
    # A home shows one person's two records 21 times in 101: the 40 pairs it shows are that
    # share of all; every contact holds a mobile, so no pair is missed for want of one.
    measured = 2.0 * 40 * 101 / 21 / 284
    assert namesakes_at_home(count) == pytest.approx(
        (40 * measured + NAMESAKE_PRIOR_PAIRS * NAMESAKES_AT_HOME) / (40 + NAMESAKE_PRIOR_PAIRS)
    )
    assert namesakes_at_home(NamesakeCount(1000, 500, 0, 50, 5)) == NAMESAKES_AT_HOME
    assert explained_by(count_dependence(sorted(people, key=lambda p: p.id))).namesakes_at_home == (
        namesakes_at_home(count)
    )


def test_a_small_crms_few_counted_juniors_outweigh_the_documented_guess() -> None:
    # The second generator's counts at 20k contacts: 4 juniors and seniors at one home, a rate
    # of about 0.01 per contact. The documented share (a round guess, 0.075) shrunk in by 20
    # pseudo-pairs gave 0.064, so a rare full name weighed 1.5 bits less at 20k than at 100k
    # (where 46 pairs are counted) and the cut moved with the CRM's size.
    small = NamesakeCount(contacts=20_000, mobiles=7_409, two_people=4, sure=254, sure_at_home=76)
    measured = 2.0 * 4 * 254 / 76 / (7_409 / 20_000) ** 2 / 20_000
    assert measured == pytest.approx(0.0097, abs=0.0001)
    assert namesakes_at_home(small) < NAMESAKES_AT_HOME / 2
    # A large CRM's count is its own measure, whatever the guess.
    large = NamesakeCount(contacts=1_000_000, mobiles=370_000, two_people=500, sure=12_700,
                          sure_at_home=3_800)
    large_measured = 2.0 * 500 * 12_700 / 3_800 / 0.37**2 / 1_000_000
    assert namesakes_at_home(large) == pytest.approx(large_measured, rel=0.02)


def test_a_crm_with_few_juniors_and_seniors_lets_a_rare_full_name_weigh_more() -> None:
    # A work record beside a personal one: one rare full name, nothing else shared.
    a = Profile("a", first="zed", last="kowalczyk", email="zed@acme.com", company="acme")
    b = Profile("b", first="zed", last="kowalczyk", email="zk@gmail.com")
    counts = [1] * 14
    total = 100_000
    few = Explained(namesakes_at_home=NAMESAKES_AT_HOME / 4)
    gain = (Scorer(total, THRESHOLDS, -20.0, explained=few).score(a, counts, b, counts).score
            - Scorer(total, THRESHOLDS, -20.0).score(a, counts, b, counts).score)
    # The name is rare: housemates of one name, not chance, bound what it weighs.
    assert gain == pytest.approx(2.0, abs=0.01)
