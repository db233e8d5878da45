"""Reviewer decisions check and, when there are enough, raise the bands; deterministically."""

from __future__ import annotations

import random

from handlers.duplicate_merger.calibration import (
    MINIMUM_DECISIONS,
    Decision,
    calibrate,
    wilson_lower,
)
from handlers.duplicate_merger.evidence import Thresholds

CONFIGURED = Thresholds(automatic=12.0, propose=0.0)


def _decisions(rejected_below: float, n: int = 200) -> list[Decision]:
    # Scores spread over the propose band; the reviewer rejects every pair under the line.
    return [
        Decision(f"{i:04d}#{i + 5000:04d}", 12.0 * i / n, 12.0 * i / n >= rejected_below)
        for i in range(n)
    ]


def test_too_few_decisions_change_nothing() -> None:
    few = _decisions(6.0)[: MINIMUM_DECISIONS - 1]
    assert calibrate(few, CONFIGURED).thresholds == CONFIGURED


def test_a_reviewer_who_rejects_low_pairs_stops_being_shown_them() -> None:
    result = calibrate(_decisions(6.0), CONFIGURED)
    assert result.adjusted and 5.0 <= result.thresholds.propose <= 6.5
    assert result.thresholds.automatic == CONFIGURED.automatic
    assert 0.45 < result.propose.precision < 0.55  # what the configured band held


def test_bands_are_never_lowered_and_order_does_not_matter() -> None:
    all_good = [Decision(f"{i:04d}#9{i:04d}", 1.0 + i / 100, True) for i in range(100)]
    assert calibrate(all_good, CONFIGURED).thresholds == CONFIGURED
    shuffled = _decisions(6.0)
    random.Random(3).shuffle(shuffled)
    assert calibrate(shuffled, CONFIGURED) == calibrate(_decisions(6.0), CONFIGURED)


def test_wilson_lower_bound_is_below_the_observed_share() -> None:
    assert wilson_lower(9, 10) < 0.9 < wilson_lower(990, 1000) + 0.02
    assert wilson_lower(0, 0) == 0.0
