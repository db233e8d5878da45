"""Where a score puts a pair: the band limits of a run.

The last step of scoring a pair (``scorer.Scorer.finish``): the score (log-odds in bits)
against the run's band limits, which the reviewer's decisions may raise per evidence class
(``levels.evidence_class``, ``calibration``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Band = Literal["automatic", "propose", "record_only"]


@dataclass(frozen=True)
class Thresholds:
    """Band limits on the score (bits): ``automatic`` merges, ``propose`` goes to review."""

    automatic: float
    propose: float

    def band(self, score: float) -> Band:
        if score >= self.automatic:
            return "automatic"
        if score >= self.propose:
            return "propose"
        return "record_only"


@dataclass(frozen=True)
class Bands:
    """The band limits of one run: ``default``, and per evidence class where this CRM's
    reviewer decisions moved them (``calibration.calibrate_by_evidence``)."""

    default: Thresholds
    by_evidence: Mapping[str, Thresholds] = field(default_factory=dict)

    def for_evidence(self, evidence: str) -> Thresholds:
        return self.by_evidence.get(evidence, self.default)
