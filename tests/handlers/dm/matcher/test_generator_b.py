"""The second generator: seeded, exact in size, its truth one person per entity, and its hard
setting harder in the ways it says (more duplicates, sparser records)."""

from __future__ import annotations

from testsupport.crm_generator_b import generate


def test_a_seed_gives_the_same_contacts_and_exactly_the_size_asked() -> None:
    first, again = generate(2_000, seed=3), generate(2_000, seed=3)
    assert first.contacts == again.contacts and len(first.contacts) == 2_000
    assert generate(2_000, seed=4).contacts != first.contacts


def test_the_truth_pairs_records_of_one_person_only() -> None:
    out = generate(2_000, seed=3)
    pairs = out.true_pairs()
    assert pairs and all(out.entity_of[a] == out.entity_of[b] for a, b in pairs)


def test_the_hard_setting_holds_more_duplicates_and_fewer_fields() -> None:
    standard, hard = generate(5_000, seed=3), generate(5_000, seed=3, setting="hard")
    assert len(hard.true_pairs()) > 1.3 * len(standard.true_pairs())

    def fields(contacts: list[tuple[str, dict[str, str]]]) -> float:
        return sum(len(p) for _, p in contacts) / len(contacts)

    assert fields(hard.contacts) < fields(standard.contacts)


def test_states_come_as_names_and_as_codes() -> None:
    states = {p["state"] for _, p in generate(2_000, seed=3).contacts if "state" in p}
    assert {"PA", "Pennsylvania"} <= states or {"TX", "Texas"} <= states
