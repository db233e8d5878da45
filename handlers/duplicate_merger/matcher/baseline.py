"""How common duplicates are in this CRM: the baseline every score starts from, counted twice.

A score is log-odds in bits: the baseline (the log-odds that two contacts drawn at random are
one person) plus the evidence. The bands mean the same on any data (0 bits is even odds) only
when the baseline is this CRM's own. Two counts in dm-block estimate it:

* **the sure pairs** (``baseline``): pairs meeting a rule almost no two people meet,
  taken as ``SURE_RECALL`` of all duplicates. Right where half of the duplicates are re-entered
  with one field that identifies the person kept; wrong where every re-entry changed something
  (RLdata10000: every duplicate holds an error in its name or birth date, so 8 of its 1,000
  pairs meet a rule, and the baseline came out 5.7 bits low: the review band held 14 % of the
  duplicates while its best cut held 91 %);
* **the evidence itself** (``expected_duplicates``): each compared pair is a duplicate with the
  probability its score says, so the duplicates among the candidates number the sum of those
  probabilities, itself a function of the baseline. The fixed point is the baseline the CRM's
  own evidence implies, as EM estimates Splink's ``probability_two_random_records_match``, with
  the field weights held (they are counted or documented elsewhere). It is counted over a
  sample of blocks (``SAMPLE_PAIRS`` pairs) and scaled to all compared pairs.

The baseline is the larger of the two. The sure pairs are duplicates almost surely, so they
bound the count from below; the evidence undercounts where one person's records share little
but a name (a work and a personal record, weighed near even odds), as on the generated CRM
(1,765 expected against 2,215 true pairs at 20k, where the sure pairs give 2,960).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence

from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.blocking import (
    KEY_NAMES,
    Block,
    BlockingReport,
    Rarity,
    owner_key,
)
from handlers.duplicate_merger.matcher.counted import (
    ContextCounts,
    DependenceCounts,
    context_priors,
    explained_by,
)
from handlers.duplicate_merger.matcher.profile import Profile
from handlers.duplicate_merger.matcher.scorer import Scorer

SAMPLE_PAIRS = 100_000
"""Compared pairs the evidence count scores in dm-block, about: enough that the estimate moves
by less than a tenth of a bit between samples, and a few seconds at any size."""

ITERATIONS = 100
TOLERANCE = 0.01
"""The fixed point stops when the expected count moves by less than this many pairs."""

_ANY = Thresholds(automatic=math.inf, propose=math.inf)
"""The bands play no part in a sum of probabilities."""


SURE_RECALL = 0.5
"""Assumed share of true duplicate pairs that a "sure" rule finds (same mailbox; same full
name and phone, birth date or street address). The baseline divides the count of sure pairs
by it, as Splink's ``estimate_probability_two_random_records_match`` divides by its recall."""


def baseline(total: int, sure_pairs: int) -> float:
    """Log-odds (bits) that two contacts drawn at random from ``total`` are one person.

    Estimated by a count over the data, not learned: ``sure_pairs`` pairs meet a rule almost
    no two different people meet, and they are about ``SURE_RECALL`` of all duplicates. Capped
    at -1 bit (a CRM that is mostly duplicates is still scored on evidence).
    """
    n = max(total, 2)
    all_pairs = n * (n - 1) / 2.0
    estimate = max(sure_pairs, 1) / SURE_RECALL
    return min(math.log2(estimate / all_pairs), -1.0)


def expected_duplicates(evidence: Sequence[float], all_pairs: float, scale: float,
                        start: float) -> float:
    """The fixed point of ``D = scale * sum(p(log2(D / all_pairs) + w))`` over the sampled
    pairs' evidence ``w`` (bits, without the baseline), from ``start`` duplicates; ``p`` is the
    probability a score in bits says. Never below one pair."""
    count = max(start, 1.0)
    for _ in range(ITERATIONS):
        bits = math.log2(count / all_pairs)
        following = scale * math.fsum(1.0 / (1.0 + math.pow(2.0, -(bits + w))) for w in evidence)
        following = max(following, 1.0)
        if abs(following - count) < TOLERANCE:
            return following
        count = following
    return count


def sampled(block: Block, every: int) -> bool:
    """Whether ``block`` is in the sample: one block (or window) in ``every``, by a hash of
    its key, value and window, so the same CRM samples the same blocks in every run."""
    window = block.window[0] if block.window else 0
    return zlib.crc32(f"{block.key}\0{block.value}\0{window}".encode()) % every == 0


def sample_evidence(
    profiles: Sequence[Profile],
    keys: Sequence[tuple[str, ...]],
    rarity: Rarity,
    blocks: Iterable[Block],
    report: BlockingReport,
    contexts: ContextCounts,
    dependence: DependenceCounts,
) -> tuple[list[float], int]:
    """The evidence (score less baseline) of the pairs in a sample of the blocks, each pair in
    the block that owns it as dm-score scores it; and one in how many blocks was sampled (each
    sampled pair stands for that many)."""
    every = max(1, math.ceil(report.comparisons / SAMPLE_PAIRS))
    scorer = Scorer(max(rarity.total, 2), _ANY, 0.0, context_priors(contexts),
                    explained_by(dependence))
    capped = {(c.key, c.value) for c in report.capped}
    seen: set[tuple[int, int]] = set()
    evidence: list[float] = []
    for block in blocks:
        if not sampled(block, every):
            continue
        k = KEY_NAMES.index(block.key)
        members = block.members
        rows = [(profiles[i].id, profiles[i].values(), rarity.at(i)) for i in members]
        for x, i in enumerate(members):
            for y in range(x + 1, len(members)):
                j = members[y]
                if (i, j) in seen or owner_key(keys[i], keys[j], capped) not in (k, -1):
                    continue
                seen.add((i, j))
                evidence.append(scorer.evaluate(*rows[x], *rows[y]).score)
    return evidence, every


def baseline_bits(total: int, sure_pairs: int, evidence: Sequence[float], every: int) -> float:
    """The baseline (bits): the larger of the sure pairs' and the evidence's estimate (the
    module's docstring), ``evidence`` being one compared pair in ``every``."""
    sure = baseline(total, sure_pairs)
    if not evidence or total < 2:
        return sure
    all_pairs = total * (total - 1) / 2.0
    count = expected_duplicates(evidence, all_pairs, float(every),
                                all_pairs * 2.0**sure)
    return min(max(sure, math.log2(count / all_pairs)), -1.0)
