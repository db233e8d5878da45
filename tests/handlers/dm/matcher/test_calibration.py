"""Reviewer decisions check and, when there are enough, raise the bands; deterministically."""

from __future__ import annotations

import random

from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.calibration import (
    MINIMUM_DECISIONS,
    Decision,
    calibrate,
    wilson_lower,
)

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


# Per evidence class, and the counters the running system keeps (issue 15) -------------------


def _class_decisions() -> list[Decision]:
    # Employer-explained pairs (coworkers) rejected at 0-9 bits; personal-identifier pairs kept.
    out = [Decision(f"e{i:03d}", 9.0 * i / 60, i >= 55, "employer") for i in range(60)]
    out += [Decision(f"p{i:03d}", 11.0 * i / 60, True, "person") for i in range(60)]
    return out


def test_a_reviewer_who_rejects_coworkers_stops_being_shown_them_only() -> None:
    from handlers.duplicate_merger.matcher.calibration import calibrate_by_evidence

    result = calibrate_by_evidence(_class_decisions(), CONFIGURED)
    assert result.adjusted == ("employer",)
    employer = result.bands.for_evidence("employer")
    assert 8.0 <= employer.propose <= CONFIGURED.automatic
    assert employer.band(6.0) == "record_only"  # a coworker pair at 6 bits is no longer shown
    assert result.bands.for_evidence("person") == CONFIGURED
    assert result.bands.for_evidence("person").band(6.0) == "propose"
    assert result.bands.for_evidence("name") == CONFIGURED  # no decisions: as configured
    shuffled = _class_decisions()
    random.Random(5).shuffle(shuffled)
    assert calibrate_by_evidence(shuffled, CONFIGURED) == result


def test_counters_keep_what_calibration_reads() -> None:
    import pytest

    from handlers.duplicate_merger.matcher.calibration import counter_name, decisions_from_counts

    assert counter_name("employer", 3.1, False) == "employer|3.00|r"
    assert counter_name("person", -0.1, True) == "person|-0.25|m"
    with pytest.raises(ValueError):
        counter_name("coworker", 1.0, True)
    counts = {"employer|3.00|r": 2, "person|12.50|m": 1, "person|12.50|r": -1, "junk": 4,
              "name|x|m": 1}
    decided = decisions_from_counts(counts)
    assert [(d.evidence, d.score, d.merged) for d in decided] == [
        ("employer", 3.0, False), ("employer", 3.0, False), ("person", 12.5, True)
    ]
    assert len({d.pair_key for d in decided}) == 3  # distinct keys: a stable order


def test_a_run_reads_the_weeks_before_its_own_once() -> None:
    from handlers.duplicate_merger.matcher.calibration import (
        LOOKBACK_WEEKS,
        RunBands,
        counter_name,
        weeks_before,
    )

    assert weeks_before("2026-W01", 2) == ["2025-W52", "2025-W51"]
    assert weeks_before("2026-W32")[0] == "2026-W31" and len(weeks_before("2026-W32")) == LOOKBACK_WEEKS
    reads: list[list[str]] = []
    rejected = {counter_name("employer", 2.0, False): 40}

    def counts(weeks: list[str]) -> dict[str, int]:
        reads.append(weeks)
        return rejected

    bands = RunBands(counts)
    first = bands("2026-W32", CONFIGURED)
    assert bands("2026-W32", CONFIGURED) is first and len(reads) == 1  # every message alike
    assert first.bands.for_evidence("employer").propose > 2.0
    bands("2026-W33", CONFIGURED)
    assert len(reads) == 2 and "2026-W32" in reads[1] and "2026-W32" not in reads[0]


def test_the_digest_says_how_the_decisions_set_the_bands() -> None:
    from handlers.duplicate_merger import digest
    from handlers.duplicate_merger.matcher.calibration import calibrate_by_evidence, describe

    configured = Thresholds(automatic=12.0, propose=0.0)
    few = calibrate_by_evidence(
        [Decision(f"e{i}", 4.0, False, "employer") for i in range(5)], configured
    )
    (line,) = describe(few.summary(), configured)
    assert line == ("Bands as configured (proposed from +0.00 bits, merged automatically from "
                    "+12.00): 5 of your decisions read so far; each kind of pair needs 30 before "
                    "they move its bands.")
    rejected = [Decision(f"e{i}", 4.0 + i / 100, False, "employer") for i in range(40)]
    kept = [Decision(f"p{i}", 6.0, True, "person") for i in range(40)]
    moved = calibrate_by_evidence([*rejected, *kept], configured)
    lines = describe(moved.summary(), configured)
    assert lines[0] == "Your decisions (80 read) moved the bands of this run:"
    assert lines[1:] == [
        f"pairs at one employer: proposed from "
        f"{moved.bands.for_evidence('employer').propose:+.2f} bits, merged automatically from "
        "+12.00 (40 decided, 0% were duplicates)"
    ]
    composed = digest.compose({"run_id": "2026-W32"}, [], [], bands=lines)
    assert lines[1] in composed.text and "<h2>Bands</h2>" in composed.html
    assert "Bands" not in digest.compose({"run_id": "2026-W32"}, [], []).html
