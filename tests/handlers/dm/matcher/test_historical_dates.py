"""A birth date before 1850 is read and weighed, but never merges a pair without a person."""

from __future__ import annotations

from handlers.duplicate_merger.matcher import ProfileBuilder
from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.profile import FIELDS
from handlers.duplicate_merger.matcher.scorer import Scorer

THRESHOLDS = Thresholds(automatic=12.0, propose=0.0)
COUNTS = [1] * len(FIELDS)


def _pair(dob: str) -> tuple[str, str, float]:
    builder = ProfileBuilder()
    props = {"firstname": "Josiah", "lastname": "Wedgwood", "date_of_birth": dob,
             "city": "Burslem"}
    a, b = builder.build("1", props), builder.build("2", props)
    pair = Scorer(120_000, THRESHOLDS, -17.0).score(a, COUNTS, b, COUNTS)
    return pair.band, pair.explanation, pair.score


def test_a_historical_birth_date_holds_a_strong_pair_for_a_person() -> None:
    band, explanation, score = _pair("1830-07-12")
    assert score >= THRESHOLDS.automatic  # the evidence is read: same rare name, date, town
    assert band == "propose"
    assert "birth date before 1850" in explanation


def test_a_modern_birth_date_still_merges_automatically() -> None:
    band, _, score = _pair("1960-07-12")
    assert score >= THRESHOLDS.automatic and band == "automatic"
