"""The matcher: CRM contacts in, scored candidate pairs out, in plain Python without AWS.

Its public API is ``__all__``, by step: a ``Profile`` per contact; ``keys_of``, ``Rarity`` and
``form_blocks`` block them; ``count_*`` count what this CRM says; ``Scorer`` scores a pair;
``calibrate*`` and ``RunBands`` move the bands. dm's pipeline and ``benchmarks/bench_dm.py``
call nothing else; the modules behind it are named in README.md beside this file.
"""

from handlers.duplicate_merger.matcher.bands import Bands, Thresholds
from handlers.duplicate_merger.matcher.baseline import baseline_bits, sample_evidence
from handlers.duplicate_merger.matcher.blocking import (
    KEY_NAMES,
    Block,
    BlockingReport,
    Rarity,
    form_blocks,
    keys_of,
    owner_key,
)
from handlers.duplicate_merger.matcher.calibration import (
    ClassCalibration,
    RunBands,
    calibrate,
    calibrate_by_evidence,
    counter_name,
    decisions_from_counts,
    describe,
    week_of,
)
from handlers.duplicate_merger.matcher.counted import (
    ContextCounts,
    DependenceCounts,
    context_priors,
    count_contexts,
    count_dependence,
    count_sure_pairs,
    counts_from_wire,
    counts_to_wire,
    explained_by,
)
from handlers.duplicate_merger.matcher.levels import nickname_related
from handlers.duplicate_merger.matcher.profile import (
    FIELDS,
    PROFILE_PROPERTIES,
    Profile,
    ProfileBuilder,
)
from handlers.duplicate_merger.matcher.scored import LABELS, ScoredPair, split_pair_key
from handlers.duplicate_merger.matcher.scorer import Scorer

__all__ = [
    "FIELDS",
    "KEY_NAMES",
    "LABELS",
    "PROFILE_PROPERTIES",
    "Bands",
    "Block",
    "BlockingReport",
    "ClassCalibration",
    "ContextCounts",
    "DependenceCounts",
    "Profile",
    "ProfileBuilder",
    "Rarity",
    "RunBands",
    "ScoredPair",
    "Scorer",
    "Thresholds",
    "baseline_bits",
    "calibrate",
    "calibrate_by_evidence",
    "context_priors",
    "count_contexts",
    "count_dependence",
    "count_sure_pairs",
    "counter_name",
    "counts_from_wire",
    "counts_to_wire",
    "decisions_from_counts",
    "describe",
    "explained_by",
    "form_blocks",
    "keys_of",
    "nickname_related",
    "owner_key",
    "sample_evidence",
    "split_pair_key",
    "week_of",
]  # fmt: skip
