"""The matcher: CRM contacts in, scored candidate pairs out, in plain Python without AWS.

Its public API is ``__all__``, by step: a ``Profile`` per contact; ``keys_of``, ``Rarity`` and
``form_blocks`` block them; ``count_*`` count what this CRM says; ``Scorer`` scores a pair;
``calibrate*`` and ``RunBands`` move the bands; the partial counts (``segments``, ``tally``,
``counted_values``...) let the split run count partition by partition what ``count_*`` count
at once. dm's pipeline and ``benchmarks/bench_dm.py``
call nothing else; the modules behind it are named in README.md beside this file.
"""

from handlers.duplicate_merger.matcher.bands import Bands, Thresholds
from handlers.duplicate_merger.matcher.baseline import (
    SAMPLE_PAIRS,
    baseline_bits,
    sample_evidence,
    sampled,
)
from handlers.duplicate_merger.matcher.blocking import (
    KEY_NAMES,
    Block,
    BlockingReport,
    CappedBlock,
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
from handlers.duplicate_merger.matcher.partial_counts import (
    K0,
    S0,
    Member,
    Segments,
    Tally,
    block_comparisons,
    counted_values,
    group_name,
    grouped,
    name_order,
    segmented,
    segments,
    tally,
    window_count,
)
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
    "K0",
    "KEY_NAMES",
    "LABELS",
    "PROFILE_PROPERTIES",
    "S0",
    "SAMPLE_PAIRS",
    "Bands",
    "Block",
    "BlockingReport",
    "CappedBlock",
    "ClassCalibration",
    "ContextCounts",
    "DependenceCounts",
    "Member",
    "Profile",
    "ProfileBuilder",
    "Rarity",
    "RunBands",
    "ScoredPair",
    "Scorer",
    "Segments",
    "Tally",
    "Thresholds",
    "baseline_bits",
    "block_comparisons",
    "calibrate",
    "calibrate_by_evidence",
    "context_priors",
    "count_contexts",
    "count_dependence",
    "count_sure_pairs",
    "counted_values",
    "counter_name",
    "counts_from_wire",
    "counts_to_wire",
    "decisions_from_counts",
    "describe",
    "explained_by",
    "form_blocks",
    "group_name",
    "grouped",
    "keys_of",
    "name_order",
    "nickname_related",
    "owner_key",
    "sample_evidence",
    "sampled",
    "segmented",
    "segments",
    "split_pair_key",
    "tally",
    "week_of",
    "window_count",
]  # fmt: skip
