"""Where a score puts a pair: its band, its evidence class, and what keeps it from merging
without a person.

The last step of scoring a pair (``evidence.Scorer``): the score (log-odds in bits) against
the run's band limits, which the reviewer's decisions may raise per evidence class
(``calibration``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from handlers.duplicate_merger.comparators import AGREE, Level, shared_home
from handlers.duplicate_merger.normalize import is_role_mailbox
from handlers.duplicate_merger.profile import COMPANY, DOB, DOMAIN, EMAIL, FIRST, GENERATION, MOBILE

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


EVIDENCE_CLASSES = ("person", "employer", "home", "name")
"""What a pair's agreement rests on, strongest kind first (``evidence_class``): a personal
identifier (``person``), an employer (``employer``), a home (``home``), or the name and place
alone (``name``). Reviewer decisions are counted per class, so a CRM whose reviewer rejects
the pairs an employer explains raises the bands of that class only (``calibration``)."""


@dataclass(frozen=True)
class Bands:
    """The band limits of one run: ``default``, and per evidence class where this CRM's
    reviewer decisions moved them (``calibration.calibrate_by_evidence``)."""

    default: Thresholds
    by_evidence: Mapping[str, Thresholds] = field(default_factory=dict)

    def for_evidence(self, evidence: str) -> Thresholds:
        return self.by_evidence.get(evidence, self.default)


def evidence_class(levels: Sequence[Level | None], email: str = "") -> str:
    """The strongest kind of fact two contacts agree on (``EVIDENCE_CLASSES``): the same
    personal mailbox, mobile or birth date; else the same employer (company or domain); else
    the same home (phone or street address); else only their name and place."""
    if (levels[EMAIL] == "exact" and not is_role_mailbox(email)) or levels[MOBILE] == "exact" or (
        levels[DOB] == "exact"
    ):
        return "person"
    if levels[COMPANY] in AGREE or levels[DOMAIN] == "exact":
        return "employer"
    if shared_home(levels):
        return "home"
    return "name"


def automatic_vetoes(levels: Sequence[Level | None]) -> tuple[str, ...]:
    """Why a pair may not merge without a person, however high it scores: a fact one person's
    records do not differ in (birth date, generational suffix), or a different given name at
    one home (two members of one family, whatever else the home explains)."""
    reasons: list[str] = []
    if levels[DOB] == "different":
        reasons.append("different date of birth")
    if levels[GENERATION] == "different":
        reasons.append("different generational suffix")
    if levels[FIRST] == "different" and shared_home(levels):
        reasons.append("different first name at one home")
    return tuple(reasons)
