"""Twins: one surname and one birth date under two given names are two people, not one."""

from __future__ import annotations

import math

from handlers.duplicate_merger.matcher import ProfileBuilder
from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.profile import FIELDS
from handlers.duplicate_merger.matcher.scorer import Scorer
from handlers.duplicate_merger.matcher.weights import PRIORS, TWIN_SHARE

TOTAL = 20_000
BASELINE = math.log2(2_700 / (TOTAL * (TOTAL - 1) / 2))
COUNTS = [2 if f in ("last", "dob") else 200 for f in FIELDS]  # a rare surname, a rare date


def _score(first_b: str) -> tuple[float, dict[str, float]]:
    builder = ProfileBuilder()
    a = builder.build("1", {"firstname": "Jordan", "lastname": "Okonkwo",
                            "date_of_birth": "1994-03-02", "email": "jordan.o@gmail.com"})
    b = builder.build("2", {"firstname": first_b, "lastname": "Okonkwo",
                            "date_of_birth": "1994-03-02", "email": "tayo.okonkwo@yahoo.com"})
    pair = Scorer(TOTAL, Thresholds(automatic=12.0, propose=0.0), BASELINE).score(
        a, COUNTS, b, COUNTS)
    return pair.score, {t.field: t.weight for t in pair.terms}


def test_twins_stay_below_the_review_band() -> None:
    score, weights = _score("Tayo")
    assert weights["dob"] == math.log2(PRIORS["dob"].exact / TWIN_SHARE)
    assert score < 0.0


def test_the_same_given_name_keeps_the_date_as_rare_as_it_is() -> None:
    _, weights = _score("Jordan")
    assert weights["dob"] > math.log2(PRIORS["dob"].exact / TWIN_SHARE) + 8
