"""A state typed as its name on one record and as its postal code on the other is one state."""

from __future__ import annotations

from handlers.duplicate_merger.matcher import ProfileBuilder
from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.levels import field_levels
from handlers.duplicate_merger.matcher.normalize import state
from handlers.duplicate_merger.matcher.profile import FIELDS, STATE
from handlers.duplicate_merger.matcher.scorer import Scorer


def test_a_us_state_name_reads_as_its_postal_code() -> None:
    assert state("Pennsylvania") == state("PA") == state("pa.") == "pa"
    assert state(" north  CAROLINA") == "nc"
    assert state("District of Columbia") == "dc"


def test_codes_and_names_it_does_not_know_stay_as_typed() -> None:
    # FEBRL's Australian codes must not become US states, nor a province a code
    assert state("wa") == "wa" and state("vic") == "vic"
    assert state("Ontario") == "ontario"
    assert state("") == ""


def test_a_name_against_its_code_agrees_and_weighs_for_the_pair() -> None:
    builder = ProfileBuilder()
    a = builder.build("1", {"firstname": "Ann", "lastname": "Lee", "state": "Pennsylvania"})
    b = builder.build("2", {"firstname": "Ann", "lastname": "Lee", "state": "PA"})
    assert field_levels(a.values(), b.values())[STATE] == "exact"
    counts = [5 if f != "state" else 400 for f in FIELDS]
    pair = Scorer(10_000, Thresholds(automatic=12.0, propose=0.0), -12.0).score(a, counts, b, counts)
    assert next(t for t in pair.terms if t.field == "state").weight >= 0.0
