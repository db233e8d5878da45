"""The benchmark's table of what a score means (``benchmarks/score_bins.py``)."""

from __future__ import annotations

from benchmarks.score_bins import around_threshold, table


def test_bins_count_pairs_and_duplicates_beside_what_the_scores_say() -> None:
    truth = {("a", "b"), ("c", "d"), ("e", "f")}
    scores = {("a", "b"): 0.5, ("x", "y"): 1.5, ("c", "d"): 3.0, ("e", "f"): 20.0, ("p", "q"): -4.0}
    lines = table(scores, truth).splitlines()
    assert lines[0] == "      [+0, +2) bits:       2 pairs, duplicates 0.500, score says 0.667"
    assert lines[1] == "      [+2, +4) bits:       1 pairs, duplicates 1.000, score says 0.889"
    assert lines[2] == "        >= +12 bits:       1 pairs, duplicates 1.000, score says >= 0.9998"
    expected = (1 / (1 + 2**-0.5) + 1 / (1 + 2**-1.5) + 1 / (1 + 2**-3) + 1 / (1 + 2**-20)) / 4
    assert lines[3] == f"    band: 4 pairs, duplicates 0.7500, scores say {expected:.4f}"
    assert table({("p", "q"): -1.0}, truth) == "    (no pair in the review band)"


def test_the_threshold_line_says_where_the_best_cut_lies_and_what_pairs_near_it_are() -> None:
    truth = {("a", "b"), ("c", "d"), ("e", "f")}
    scores = {("a", "b"): -1.5, ("x", "y"): -0.5, ("c", "d"): 0.5, ("e", "f"): 20.0,
              ("p", "q"): -3.0, ("r", "s"): 5.0}
    line = around_threshold(scores, truth, propose=0.0, best_cut=-1.5)
    assert "best-F1 cut -1.50 bits from it" in line
    assert "band precision 0.6667 at it (3 pairs), 0.6000 at the cut (5)" in line
    assert "[-4, -2) 0.00 of 1 (says 0.11), [-2, +0) 0.50 of 2 (says 0.33)" in line
    assert line.endswith("[+0, +2) 1.00 of 1 (says 0.67)")  # 20 and 5 bits lie outside the span
