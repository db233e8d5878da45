"""The split run's scale verdict (``benchmarks/split_scale.py``): flat with size, and its
largest invocation against the single run's peak."""

from __future__ import annotations

from benchmarks.split_scale import SplitFigures, StageFigures, flatness


def run(size: int, **largest_mb: float) -> SplitFigures:
    stages = {stage: StageFigures(size // 5_000, 1.0, mb, 10.0) for stage, mb in largest_mb.items()}
    return SplitFigures(size, 42.0, stages, 100, 10**6, 10, 0.1, 60.0)


def test_peaks_within_a_tenth_of_growth_are_flat_and_the_share_is_of_the_largest_size() -> None:
    lines = flatness([run(300_000, count=100.0, tally=110.0), run(1_000_000, count=109.0,
                                                                 tally=95.0)], 1_392.0, "documented")
    assert lines[0] == (
        "  split run's largest invocations from 300,000 to 1,000,000 contacts: flat (most "
        "grown: count, 100 -> 109 MB, x1.09; flat is at most x1.1)"
    )
    assert lines[1] == (
        "  largest invocation at 1,000,000: 109 MB = 0.078 of the single run's peak "
        "(1,392 MB, documented); target at most 0.1: met"
    )


def test_a_stage_that_grows_more_is_not_flat_and_a_large_share_is_not_met() -> None:
    lines = flatness([run(1_000_000, emit=150.0), run(300_000, emit=120.0)], 1_392.0, "measured")
    assert "NOT flat (most grown: emit, 120 -> 150 MB, x1.25" in lines[0]
    assert lines[1].endswith("= 0.108 of the single run's peak (1,392 MB, measured); target at "
                             "most 0.1: NOT met")
