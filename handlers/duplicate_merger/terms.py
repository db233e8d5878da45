"""What scoring a pair leaves: each field's evidence (``Term``), the reasons against
(``Against``) and the scored pair (``ScoredPair``) that dm-score writes and the pages show."""

from __future__ import annotations

from dataclasses import dataclass

from handlers.duplicate_merger.bands import Band
from handlers.duplicate_merger.comparators import Level


@dataclass(frozen=True)
class Term:
    """One field's evidence.

    Attributes:
        field: Which field.
        agreed: Whether the values agree (exactly, similarly or swapped).
        level: ``exact``, ``similar``, ``swapped`` or ``different``.
        rarity: Share of contacts holding the agreed value (0 for a disagreement).
        weight: Bits of evidence, positive for, negative against.
    """

    field: str
    agreed: bool
    level: Level
    rarity: float
    weight: float

    def to_item(self) -> dict[str, object]:
        return {
            "field": self.field,
            "agreed": self.agreed,
            "level": self.level,
            "rarity": round(self.rarity, 8),
            "weight": round(self.weight, 3),
        }


@dataclass(frozen=True)
class Against:
    """Evidence against: a reason a person reads and its strength in bits."""

    reason: str
    strength: float

    def to_item(self) -> dict[str, object]:
        return {"reason": self.reason, "strength": round(self.strength, 3)}


@dataclass(frozen=True)
class ScoredPair:
    """A compared pair with its evidence, score, band and one-line explanation."""

    pair_key: str
    low_id: str
    high_id: str
    score: float
    baseline: float
    terms: tuple[Term, ...]
    against: tuple[Against, ...]
    band: Band
    explanation: str
    evidence: str = "name"
    """The pair's evidence class (``EVIDENCE_CLASSES``)."""
