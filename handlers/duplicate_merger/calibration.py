"""Reviewer decisions checking, and with enough of them raising, the score bands.

The decisions table holds every pair a person merged or marked "not a duplicate". Joined with
the score each pair had when it was shown, they are this CRM's own measurement of what a band
holds: if the reviewer keeps rejecting pairs that score 2 bits (say coworkers whose evidence dm
over-counts here), the propose band should start above them. Rules, all deterministic (the same
decisions always give the same bands, in any order):

* nothing changes below ``MINIMUM_DECISIONS`` decisions in the band (too few to measure);
* a band limit is only ever **raised**, never lowered below the configured one: decisions show
  what was wrong among what was shown, never what was not shown;
* the new limit is the lowest decided score from which the share of "merged" decisions, read
  as its Wilson lower bound at 95 % (so 9 of 10 does not pass for 0.9), reaches the band's
  target precision; if no such score exists, the highest decided score above which none was
  rejected.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from handlers.duplicate_merger.evidence import Thresholds

MINIMUM_DECISIONS = 30
"""Decisions in a band before they may move its limit."""

PROPOSE_TARGET = 0.90
"""Share of proposals that should be duplicates: below it, reviewers stop opening the digest."""

AUTOMATIC_TARGET = 0.995
"""Share of automatic merges that should be duplicates (each wrong one is undone by hand)."""

_Z = 1.96


@dataclass(frozen=True)
class Decision:
    """One decided pair: its key, its score when shown, and whether it was one person."""

    pair_key: str
    score: float
    merged: bool


@dataclass(frozen=True)
class BandCheck:
    """What the decisions say about one band."""

    decided: int
    merged: int
    limit: float

    @property
    def precision(self) -> float:
        return self.merged / self.decided if self.decided else float("nan")


@dataclass(frozen=True)
class Calibration:
    """The bands to use this run, and what the decisions said about the configured ones."""

    thresholds: Thresholds
    propose: BandCheck
    automatic: BandCheck
    adjusted: bool


def wilson_lower(successes: int, total: int, z: float = _Z) -> float:
    """Lower end of the Wilson score interval of a binomial share (0 for no trials)."""
    if total == 0:
        return 0.0
    p = successes / total
    centre = p + z * z / (2 * total)
    spread = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    return (centre - spread) / (1 + z * z / total)


def _limit(decisions: list[Decision], floor: float, target: float) -> float:
    """The lowest score >= ``floor`` from which the decided pairs meet ``target``."""
    above = [d for d in decisions if d.score >= floor]
    if len(above) < MINIMUM_DECISIONS:
        return floor
    # Walk from the highest score down, keeping the lowest cut whose pairs meet the target.
    ordered = sorted(above, key=lambda d: (-d.score, d.pair_key))
    merged = 0
    best: float | None = None
    for n, d in enumerate(ordered, start=1):
        merged += d.merged
        if n < len(ordered) and ordered[n].score == d.score:
            continue  # a cut never splits one score
        if wilson_lower(merged, n) >= target:
            best = d.score
    if best is not None and best == ordered[-1].score:
        return floor  # the whole band meets the target: nothing to raise
    if best is None:  # no cut meets it: start above the highest rejected pair
        rejected = [d.score for d in ordered if not d.merged]
        best = math.nextafter(max(rejected), math.inf) if rejected else floor
    return max(best, floor)


def calibrate(decisions: Iterable[Decision], configured: Thresholds) -> Calibration:
    """The bands for this run from the decided pairs (see the module docstring)."""
    decided = sorted(decisions, key=lambda d: d.pair_key)
    # The propose limit reads the reviewer's decisions on proposals only: automatic merges
    # are "merged" by dm itself unless undone, and would flatter the band below them.
    reviewed = [d for d in decided if d.score < configured.automatic]
    propose = _limit(reviewed, configured.propose, PROPOSE_TARGET)
    automatic = _limit(decided, configured.automatic, AUTOMATIC_TARGET)
    propose = min(propose, automatic)

    def check(low: float, high: float) -> BandCheck:
        inside = [d for d in decided if low <= d.score < high]
        return BandCheck(len(inside), sum(d.merged for d in inside), low)

    thresholds = Thresholds(automatic=automatic, propose=propose)
    return Calibration(
        thresholds=thresholds,
        propose=check(configured.propose, configured.automatic),
        automatic=check(configured.automatic, math.inf),
        adjusted=thresholds != configured,
    )
