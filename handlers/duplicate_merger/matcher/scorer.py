"""Scoring: rarity-weighted evidence for and against two contacts being one person.

``Scorer.evaluate`` walks a pair forward, one module per step:

1. ``levels``: each field present on both contacts gets a level (exact, similar, swapped with
   the other name field, different), and from the levels alone follow the pair's context, its
   evidence class and the vetoes on an automatic merge;
2. ``weights``: a level weighs, Fellegi-Sunter style and with no training step,
   ``log2(m / (count/N))`` for an agreement on a value held by ``count`` of the ``N`` contacts
   (a surname three contacts share is strong evidence, "Smith" is weak, a placeholder phone
   shared by 400 contacts almost none), a wider count and smaller ``m`` for a similar value, and
   ``log2(P(differ | same person))`` for a difference. ``m`` is a documented prior per field and
   per context of the pair; records of two contexts count one difference; an agreement another
   one explains (an office address by its employer, a surname by a home) counts no rarer than a
   floor; a full name weighs no more than namesakes by chance and housemates of one name allow.

``Scorer.finish`` then puts the score against the band limits (``bands``) and writes the scored
pair and the one line a reviewer reads (``scored``).

The score adds the weights to a baseline: the log-odds that two contacts picked at random are
one person (``baseline``). A score therefore reads as log-odds in bits, 0 is even odds and 10
about a thousand to one, whatever the size of the CRM. The same two profiles and counts always
give the same score, terms and band.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from handlers.duplicate_merger.matcher.bands import Bands, Thresholds
from handlers.duplicate_merger.matcher.levels import (
    NAMED,
    Context,
    Level,
    automatic_vetoes,
    crossed_count,
    crossed_name_count,
    evidence_class,
    field_levels,
    historical,
    nickname_related,
    pair_context,
    retyped_date_part,
    same_org_domain,
)
from handlers.duplicate_merger.matcher.profile import (
    DOB,
    EMAIL,
    FIELDS,
    FIRST,
    GENERATION,
    LAST,
    MOBILE,
    Profile,
)
from handlers.duplicate_merger.matcher.scored import (
    LABELS,
    Against,
    ScoredPair,
    Term,
    explain,
    pair_key,
)
from handlers.duplicate_merger.matcher.weights import (
    CONTEXT_PRIORS,
    DATE_PART_SPREAD,
    DOCUMENTED,
    INITIAL_SHARE,
    PRIORS,
    SAME_DOMAIN_DIFFER,
    Explained,
    FieldPrior,
    housemates_weight,
    implied_floors,
    namesake_excess,
    one_context_change,
    one_move,
)

_PRIORS = tuple(PRIORS[name] for name in FIELDS)


@dataclass(frozen=True)
class Evaluation:
    """A pair's field levels and weights, before the explanation is written."""

    low_id: str
    high_id: str
    levels: tuple[Level | None, ...]
    weights: tuple[float, ...]
    counts: tuple[int, ...]
    score: float
    evidence: str = "name"
    given_form: str = ""
    """How a similar given name differs (``scored.GIVEN_FORMS``): "nickname", "initial", or ""
    for a typo or another spelling."""
    old_dates: bool = False
    """Whether either record's birth date is historical (``levels.historical``)."""


_Tables = tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]


def _log_tables(priors: Sequence[FieldPrior]) -> _Tables:
    """log2 of P(exact), P(similar) and P(differ) per field, as the scorer adds them."""
    return (
        tuple(math.log2(p.exact) for p in priors),
        tuple(math.log2(max(p.similar, 0.01)) for p in priors),
        tuple(math.log2(p.differ) if p.disagreement_counts else 0.0 for p in priors),
    )


_LOG_EXACT, _LOG_SIMILAR, _DIFFER = _log_tables(_PRIORS)
_SPREAD = tuple(p.spread for p in _PRIORS)
_LOG2 = math.log2
_LOG_SAME_DOMAIN_DIFFER = math.log2(SAME_DOMAIN_DIFFER)


class Scorer:
    """Scores pairs of profiles from their field counts over ``total`` contacts."""

    def __init__(
        self,
        total: int,
        thresholds: Thresholds | Bands,
        baseline_bits: float,
        contexts: Mapping[Context, Mapping[str, FieldPrior]] | None = None,
        explained: Explained = DOCUMENTED,
    ) -> None:
        """``contexts`` overrides ``CONTEXT_PRIORS`` with this CRM's own counts
        (``counted.context_priors``), ``explained`` the documented dependence of places and
        surnames at one home (``counted.explained_by``)."""
        if total < 2:
            raise ValueError("scoring needs at least two contacts")
        self.total = total
        self.bands = thresholds if isinstance(thresholds, Bands) else Bands(thresholds)
        self.baseline = baseline_bits
        self.explained = explained
        self._tables: dict[Context, _Tables] = {"one": (_LOG_EXACT, _LOG_SIMILAR, _DIFFER)}
        for context, documented in CONTEXT_PRIORS.items():
            priors = {**documented, **(contexts or {}).get(context, {})}
            self._tables[context] = _log_tables(
                [priors.get(name, prior) for name, prior in zip(FIELDS, _PRIORS, strict=True)]
            )
        self._housemates_weight = housemates_weight(
            PRIORS["first"].exact, PRIORS["last"].exact, total, explained.namesakes_at_home
        )

    def evaluate(
        self,
        a_id: str,
        av: Sequence[str],
        a_counts: Sequence[int],
        b_id: str,
        bv: Sequence[str],
        b_counts: Sequence[int],
    ) -> Evaluation:
        """Levels, weights and score of two profiles' values (``Profile.values()``) and counts,
        order-free. Cheap enough for every candidate pair; ``finish`` adds the terms and the
        explanation. An agreement on a value held by ``count`` of ``total`` contacts weighs
        ``log2(m / max(count/total, floor))``, a similar one ``log2(m_similar / (spread *
        share))``, neither below 0; a difference ``log2(P(differ | same person))``."""
        if b_id < a_id:
            a_id, av, a_counts, b_id, bv, b_counts = b_id, bv, b_counts, a_id, av, a_counts
        # What the levels say (``levels``), all of it before any weight.
        levels = field_levels(av, bv)
        top = [x if x > y else y for x, y in zip(a_counts, b_counts, strict=True)]
        if levels[MOBILE] == "exact" and av[MOBILE] != bv[MOBILE]:  # crossed fields
            top[MOBILE] = crossed_count(av, bv, a_counts, b_counts)
        for i in (FIRST, LAST):
            if levels[i] == "swapped":
                top[i] = crossed_name_count(i, levels, av, bv, a_counts, b_counts)
        org_mailboxes = levels[EMAIL] == "different" and same_org_domain(av[EMAIL], bv[EMAIL])
        nickname = levels[FIRST] == "similar" and nickname_related(av[FIRST], bv[FIRST])
        retyped = levels[DOB] == "similar" and retyped_date_part(av[DOB], bv[DOB])
        context = pair_context(levels, av, bv)
        evidence = evidence_class(levels, av[EMAIL])
        # What they weigh (``weights``).
        floors = implied_floors(
            levels,
            av[EMAIL],
            top,
            home=context == "home",
            suffixed=bool(av[GENERATION] or bv[GENERATION]),
            measured=self.explained,
        )
        weights = [0.0] * len(FIELDS)
        counts = [0] * len(FIELDS)
        total = self.total
        score = self.baseline
        given_form = ""
        log_exact, log_similar, differ = self._tables[context]
        for i, level in enumerate(levels):
            if level is None:
                continue
            if level == "different":
                weight = differ[i]
                if i == EMAIL and org_mailboxes:
                    weight = _LOG_SAME_DOMAIN_DIFFER
            else:
                count = top[i]  # a swapped name's: ``crossed_name_count``
                counts[i] = count
                share = (count or 1) / total
                floor = floors.get(i, 0.0)
                if share < floor:
                    share = floor
                if i == FIRST and nickname:
                    given_form = "nickname"
                    if len(av[i]) == 1 or len(bv[i]) == 1:
                        given_form = "initial"
                        share = share if share > INITIAL_SHARE else INITIAL_SHARE
                    weight = log_similar[i] - _LOG2(share)  # a name's own form: no spread
                    if weight < 0.0:
                        weight = 0.0
                elif level == "similar":
                    spread = _SPREAD[i]
                    if i == DOB and retyped:
                        spread = DATE_PART_SPREAD
                    wide = spread * share
                    weight = log_similar[i] - _LOG2(wide if wide < 0.5 else 0.5)
                    if weight < 0.0:
                        weight = 0.0
                else:  # an agreement is never evidence against, however common
                    weight = log_exact[i] - _LOG2(share)
                    if weight < 0.0:
                        weight = 0.0
            weights[i] = weight
            score += weight
        if context == "other":
            score -= one_context_change(weights)
        score -= one_move(weights)
        if levels[FIRST] in NAMED and levels[LAST] in NAMED:
            excess = namesake_excess(weights[FIRST], weights[LAST], self._housemates_weight)
            if excess > 0.0:
                from_first = min(excess, weights[FIRST])
                weights[FIRST] -= from_first
                weights[LAST] -= excess - from_first
                score -= excess
        return Evaluation(
            a_id, b_id, tuple(levels), tuple(weights), tuple(counts), score, evidence,
            given_form, historical(av, bv),
        )

    def finish(self, ev: Evaluation) -> ScoredPair:
        """The evidence terms, the reasons against, the band and the one-line explanation."""
        # Only pairs worth recording get here: the vetoes are read from their levels now, not
        # for every pair ``evaluate`` sees (most score below the record floor).
        vetoes = automatic_vetoes(ev.levels, old_dates=ev.old_dates)
        terms = [
            Term(
                FIELDS[i],
                level != "different",
                level,
                ev.counts[i] / self.total,
                ev.weights[i],
            )
            for i, level in enumerate(ev.levels)
            if level is not None
        ]
        terms.sort(key=lambda t: (-abs(t.weight), t.field))
        against = tuple(
            Against(f"different {LABELS[t.field]}", -t.weight) for t in terms if t.weight < 0
        )
        band = self.bands.for_evidence(ev.evidence).band(ev.score)
        explanation = explain(terms, self.total, given_form=ev.given_form)
        if band == "automatic" and vetoes:
            band = "propose"
            explanation += f" (not merged automatically: {vetoes[0]})"
        return ScoredPair(
            pair_key=pair_key(ev.low_id, ev.high_id),
            low_id=ev.low_id,
            high_id=ev.high_id,
            score=ev.score,
            baseline=self.baseline,
            terms=tuple(terms),
            against=against,
            band=band,
            explanation=explanation,
            evidence=ev.evidence,
        )

    def score(
        self, a: Profile, a_counts: Sequence[int], b: Profile, b_counts: Sequence[int]
    ) -> ScoredPair:
        """The full evidence for two profiles: ``finish(evaluate(...))``."""
        ev = self.evaluate(a.id, a.values(), a_counts, b.id, b.values(), b_counts)
        return self.finish(ev)
