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
  rejected;
* bands move per evidence class (``levels.EVIDENCE_CLASSES``): the reviewer who rejects the
  pairs an employer explains (coworkers) raises the employer class's bands, not the bands of
  pairs resting on a personal mailbox.

How the running system keeps them (``store.DecisionTally``, written by dm-merge, read by
dm-score): each decision adds one to a counter named by its evidence class, its score rounded
down to ``SCORE_STEP`` and its outcome, in one item per ISO week of the decision
(``calibration#2026-W05``); an undo moves its pair from "merged" to "not merged" in the week
of the undo. A run calibrates from the weeks before its own (``weeks_before``), so every block
message of one run gets the same bands, whenever it is scored, and the same decisions always
give the same bands.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from handlers.duplicate_merger.matcher.bands import Bands, Thresholds
from handlers.duplicate_merger.matcher.levels import EVIDENCE_CLASSES

MINIMUM_DECISIONS = 30
"""Decisions in a band before they may move its limit."""

PROPOSE_TARGET = 0.90
"""Share of proposals that should be duplicates: below it, reviewers stop opening the digest."""

AUTOMATIC_TARGET = 0.995
"""Share of automatic merges that should be duplicates (each wrong one is undone by hand)."""

_Z = 1.96

SCORE_STEP = 0.25
"""Bits a counted decision's score is rounded down to (the counters' resolution)."""

LOOKBACK_WEEKS = 104
"""Weeks of decisions a run reads: two years of a reviewer's work."""


@dataclass(frozen=True)
class Decision:
    """One decided pair: its key, its score when shown, and whether it was one person."""

    pair_key: str
    score: float
    merged: bool
    evidence: str = ""


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


@dataclass(frozen=True)
class ClassCalibration:
    """The run's bands per evidence class and what the decisions said about each class."""

    bands: Bands
    by_evidence: Mapping[str, Calibration]

    @property
    def adjusted(self) -> tuple[str, ...]:
        return tuple(c for c in EVIDENCE_CLASSES if c in self.bands.by_evidence)

    def summary(self) -> dict[str, Any]:
        """What the run's digest says of it: per class, the decisions read and, where they
        moved the bands, the bands used (``describe``)."""
        classes: dict[str, dict[str, Any]] = {}
        for evidence in EVIDENCE_CLASSES:
            result = self.by_evidence[evidence]
            decided = result.propose.decided + result.automatic.decided
            merged = result.propose.merged + result.automatic.merged
            entry: dict[str, Any] = {"decided": decided, "merged": merged}
            if result.adjusted:
                entry["propose"] = result.thresholds.propose
                entry["automatic"] = result.thresholds.automatic
            classes[evidence] = entry
        return {"classes": classes, "minimum": MINIMUM_DECISIONS}


CLASS_LABELS = {
    "person": "pairs sharing a personal mailbox, mobile or birth date",
    "employer": "pairs at one employer",
    "home": "pairs at one home",
    "name": "pairs sharing only a name and a place",
}


def describe(summary: Mapping[str, Any], configured: Thresholds) -> list[str]:
    """The digest's lines on how the reviewer's decisions set this run's bands."""
    classes: Mapping[str, Mapping[str, Any]] = summary.get("classes") or {}
    moved = [c for c in EVIDENCE_CLASSES if "propose" in classes.get(c, {})]
    total = sum(int(classes.get(c, {}).get("decided", 0)) for c in EVIDENCE_CLASSES)
    if not moved:
        return [
            f"Bands as configured (proposed from {configured.propose:+.2f} bits, merged "
            f"automatically from {configured.automatic:+.2f}): {total} of your decisions read "
            f"so far; each kind of pair needs {summary.get('minimum', MINIMUM_DECISIONS)} "
            "before they move its bands."
        ]
    lines = [f"Your decisions ({total} read) moved the bands of this run:"]
    for c in moved:
        entry = classes[c]
        decided, merged = int(entry["decided"]), int(entry["merged"])
        share = f"{merged / decided:.0%}" if decided else "none"
        lines.append(
            f"{CLASS_LABELS[c]}: proposed from {float(entry['propose']):+.2f} bits, merged "
            f"automatically from {float(entry['automatic']):+.2f} ({decided} decided, {share} "
            "were duplicates)"
        )
    return lines


def calibrate_by_evidence(decisions: Iterable[Decision], configured: Thresholds) -> ClassCalibration:
    """``calibrate`` per evidence class; a class without enough decisions keeps ``configured``."""
    grouped: dict[str, list[Decision]] = {c: [] for c in EVIDENCE_CLASSES}
    for d in decisions:
        if d.evidence in grouped:
            grouped[d.evidence].append(d)
    results = {c: calibrate(grouped[c], configured) for c in EVIDENCE_CLASSES}
    moved = {c: r.thresholds for c, r in results.items() if r.adjusted}
    return ClassCalibration(Bands(configured, moved), results)


# The counters the running system keeps --------------------------------------------------


def counter_name(evidence: str, score: float, merged: bool) -> str:
    """``<class>|<score rounded down to SCORE_STEP>|<m or r>``: one counter of decisions."""
    if evidence not in EVIDENCE_CLASSES:
        raise ValueError(f"unknown evidence class {evidence!r}")
    if not math.isfinite(score):
        raise ValueError("a decision's score must be finite")
    step = math.floor(score / SCORE_STEP) * SCORE_STEP
    return f"{evidence}|{step:.2f}|{'m' if merged else 'r'}"


def decisions_from_counts(counts: Mapping[str, int]) -> list[Decision]:
    """The decisions a set of counters holds (summed over weeks), each at its rounded score.

    Unknown or malformed counter names are skipped, never guessed; a negative total (an undo
    counted in a week the run reads, its merge in one it does not) counts as none."""
    out: list[Decision] = []
    for name in sorted(counts):
        evidence, _, rest = name.partition("|")
        score_text, _, outcome = rest.partition("|")
        if evidence not in EVIDENCE_CLASSES or outcome not in ("m", "r"):
            continue
        try:
            score = float(score_text)
        except ValueError:
            continue
        for n in range(max(int(counts[name]), 0)):
            out.append(Decision(f"{name}|{n}", score, outcome == "m", evidence))
    return out


def week_of(moment: dt.datetime) -> str:
    """The ISO week of a decision: ``2026-W05`` (the run id's form)."""
    year, week, _ = moment.astimezone(dt.UTC).isocalendar()
    return f"{year}-W{week:02d}"


def weeks_before(run_id: str, count: int = LOOKBACK_WEEKS) -> list[str]:
    """The ``count`` ISO weeks before the run's own week, newest first."""
    try:
        year, week = run_id.split("-W")
        monday = dt.date.fromisocalendar(int(year), int(week), 1)
    except ValueError as err:
        raise ValueError(f"{run_id!r} is not an ISO week run id") from err
    out = []
    for n in range(1, count + 1):
        y, w, _ = (monday - dt.timedelta(weeks=n)).isocalendar()
        out.append(f"{y}-W{w:02d}")
    return out


class RunBands:
    """The bands of a run from the decision counters, read once per run and kept: every
    message of one run is scored with the same bands (the weeks before the run's own).

    ``counts`` reads the counters summed over a list of weeks (``store.DecisionTally.counts``).
    """

    def __init__(
        self,
        counts: Callable[[list[str]], Mapping[str, int]],
        on_calibrated: Callable[[str, ClassCalibration], None] | None = None,
    ) -> None:
        """``on_calibrated(run_id, calibration)`` runs once per run before the bands are kept
        (dm-score notes them for the digest); if it raises, the next call tries again."""
        self._counts = counts
        self._on_calibrated = on_calibrated
        self._runs: dict[tuple[str, Thresholds], ClassCalibration] = {}

    def __call__(self, run_id: str, configured: Thresholds) -> ClassCalibration:
        key = (run_id, configured)
        if key not in self._runs:
            decisions = decisions_from_counts(self._counts(weeks_before(run_id)))
            result = calibrate_by_evidence(decisions, configured)
            if self._on_calibrated is not None:
                self._on_calibrated(run_id, result)
            self._runs = {key: result}  # one run at a time
        return self._runs[key]
