"""A move is one fact: places that differ together weigh what the strongest of them says, and a
personal mailbox no one else holds outweighs it."""

from __future__ import annotations

import math

from handlers.duplicate_merger.matcher import ProfileBuilder
from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.profile import FIELDS
from handlers.duplicate_merger.matcher.scorer import Scorer
from handlers.duplicate_merger.matcher.weights import PRIORS

PLACES = ("house", "street", "postcode", "city", "state")
TOTAL = 20_000
BASELINE = math.log2(2_700 / (TOTAL * (TOTAL - 1) / 2))  # about 14 % of contacts duplicated


def _scored(before: dict[str, str], after: dict[str, str]) -> tuple[float, dict[str, float], str]:
    builder = ProfileBuilder()
    a, b = builder.build("1", before), builder.build("2", after)
    counts = [1 if f in ("email", "house") else 40 for f in FIELDS]  # a mailbox only they hold
    pair = Scorer(TOTAL, Thresholds(automatic=12.0, propose=0.0), BASELINE).score(
        a, counts, b, counts)
    return pair.score, {t.field: t.weight for t in pair.terms}, pair.band


HOME = {"firstname": "Margaret", "lastname": "Okafor", "email": "mokafor77@gmail.com",
        "address": "12 Birch Road", "zip": "15206", "city": "Pittsburgh", "state": "PA"}
MOVED = {"firstname": "Peggy", "lastname": "Okafor", "email": "mokafor77@gmail.com",
         "address": "4410 Walnut Drive", "zip": "77006", "city": "Houston", "state": "TX"}


def test_places_that_differ_together_count_once() -> None:
    _, weights, _ = _scored(HOME, MOVED)
    against = [weights[f] for f in PLACES if weights[f] < 0]
    assert len(against) == 1
    assert against[0] == min(math.log2(PRIORS[f].differ) for f in PLACES)


def test_a_mailbox_no_one_else_holds_outweighs_a_move_across_states() -> None:
    score, weights, band = _scored(HOME, MOVED)
    assert weights["email"] > -sum(w for f, w in weights.items() if f in PLACES)
    assert band in ("propose", "automatic") and score > 4.0
