"""What a dm score means at each size: measured precision per score bin beside the model's own.

dm's score is log-odds in bits, so a pair scoring ``s`` should be a duplicate with probability
``1 / (1 + 2**-s)`` whatever the CRM's size. ``table`` prints, per two-bit bin of the review
band, how many pairs scored there and the share that are duplicates, next to what the score
says; and for the whole band the mean of what the scores say (the model's expected precision)
against the measured one. A band whose measured precision falls with size while each bin holds
still is a change of mix (more pairs near even odds), not of what the scores mean.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Set

Pair = tuple[str, str]

BIN_BITS = 2
TOP_BIN = 12
"""Scores at or above this share one bin (the automatic band)."""


def _expected(score: float) -> float:
    return 1.0 / (1.0 + math.pow(2.0, -score))


def table(scores: Mapping[Pair, float], truth: Set[Pair], *, propose: float = 0.0) -> str:
    """Per-bin and whole-band precision, measured and as the scores say, for pairs >= ``propose``."""
    bins: dict[int, list[int]] = {}
    expected = 0.0
    band = 0
    true = 0
    for pair, score in scores.items():
        if score < propose:
            continue
        low = min(math.floor(score / BIN_BITS) * BIN_BITS, TOP_BIN)
        cell = bins.setdefault(low, [0, 0])
        cell[0] += 1
        cell[1] += pair in truth
        expected += _expected(score)
        band += 1
        true += pair in truth
    if not band:
        return "    (no pair in the review band)"
    rows = []
    for low in sorted(bins):
        n, hits = bins[low]
        label = f"[{low:+d}, {low + BIN_BITS:+d})" if low < TOP_BIN else f">= {TOP_BIN:+d}"
        says = f"{_expected(low + BIN_BITS / 2):.3f}" if low < TOP_BIN else ">= 0.9998"
        rows.append(f"    {label:>10} bits: {n:>7} pairs, duplicates {hits / n:.3f}, score says {says}")
    rows.append(
        f"    band: {band} pairs, duplicates {true / band:.4f}, scores say {expected / band:.4f}"
    )
    return "\n".join(rows)


def around_threshold(
    scores: Mapping[Pair, float], truth: Set[Pair], *, propose: float, best_cut: float,
    span: int = 4,
) -> str:
    """What the propose threshold means on this data set: the best-F1 cut's distance from it
    (in bits; the cut is chosen on the truth), the band's precision at the threshold and at
    the cut, and per bin of ``BIN_BITS`` within ``span`` bits either side of the threshold the
    measured share of duplicates beside what the scores say. On data whose scores mean what
    they say, the share crosses one half at the threshold (0 bits, even odds)."""

    def precision(cut: float) -> tuple[int, float]:
        kept = [pair in truth for pair, score in scores.items() if score >= cut]
        return len(kept), (sum(kept) / len(kept) if kept else 0.0)

    n0, p0 = precision(propose)
    nb, pb = precision(best_cut)
    cells: dict[int, list[int]] = {}
    for pair, score in scores.items():
        if propose - span <= score < propose + span:
            low = math.floor((score - propose) / BIN_BITS) * BIN_BITS
            cell = cells.setdefault(low, [0, 0])
            cell[0] += 1
            cell[1] += pair in truth
    bins = ", ".join(
        f"[{low:+d}, {low + BIN_BITS:+d}) {hits / n:.2f} of {n} (says {_expected(low + 1):.2f})"
        for low, (n, hits) in sorted(cells.items())
    )
    return (
        f"  propose threshold: best-F1 cut {best_cut - propose:+.2f} bits from it; band "
        f"precision {p0:.4f} at it ({n0:,} pairs), {pb:.4f} at the cut ({nb:,}); duplicates "
        f"per bin around it: {bins or 'no pairs'}"
    )
