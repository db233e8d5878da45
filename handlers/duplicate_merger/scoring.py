"""dm-score's work: one block message in, candidate pairs out (``functions/score.py``).

For each pair the message owns: skip it if a decision exists (a "not a duplicate" is never
proposed again), else upsert its row (one row per pair: ``min#max``), and send an
automatic-band pair to ``dm-merges`` (format version stamped) the first time this run sees it
in that band. A malformed message is refused into dm-blocks' DLQ (``functions/score.py``); any
other failure fails that message only, and SQS redelivers it: every write here is idempotent
for a redelivery.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from handlers.common import formats, metrics
from handlers.duplicate_merger.contract import MERGE_REQUEST_VERSION
from handlers.duplicate_merger.matcher import ClassCalibration, Profile, Thresholds
from handlers.duplicate_merger.pipeline import decode_message, score_message


class Pairs(Protocol):
    def decided(self, pair_key: str) -> bool: ...

    def upsert(
        self, cand: Any, *, run_id: str, ttl: int, contacts: Mapping[str, Mapping[str, str]]
    ) -> Mapping[str, Any] | None: ...


class MergeQueue(Protocol):
    def send(self, message: Mapping[str, Any]) -> None: ...


def card(p: Profile) -> dict[str, str]:
    """What the proposal page shows of a contact (it never reads the CRM itself)."""
    name = " ".join(x for x in (p.first, p.last) if x).title()
    return {k: v for k, v in {"name": name, "email": p.email, "phone": p.phone,
                              "company": p.company, "city": p.city.title()}.items() if v}


def process(
    body: str,
    pairs: Pairs,
    merges: MergeQueue,
    *,
    thresholds: Thresholds,
    floor: float,
    now: dt.datetime,
    pair_ttl_days: int,
    calibrate: Callable[[str, Thresholds], ClassCalibration] | None = None,
) -> dict[str, int]:
    """Score one block message and record its pairs; returns counts for the log.

    With ``calibrate`` (``calibration.RunBands``), the bands are those the reviewer's
    decisions before this run gave each evidence class; the configured ones otherwise."""
    message = decode_message(body)
    calibration = calibrate(message.run_id, thresholds) if calibrate else None
    scored = score_message(message, calibration.bands if calibration else thresholds, floor=floor)
    profiles = {p.id: p for p in message.profiles}
    ttl = int((now + dt.timedelta(days=pair_ttl_days)).timestamp())
    counts = {"compared": scored.compared, "below_floor": scored.below_floor, "decided": 0,
              "written": 0, "stale": 0, "automatic_sent": 0,
              "calibrated_classes": len(calibration.adjusted) if calibration else 0}
    bands: dict[str, int] = {}
    for cand in scored.pairs:
        s = cand.scored
        if pairs.decided(s.pair_key):
            counts["decided"] += 1
            continue
        previous = pairs.upsert(
            cand,
            run_id=message.run_id,
            ttl=ttl,
            contacts={"low": card(profiles[s.low_id]), "high": card(profiles[s.high_id])},
        )
        if previous is None:
            counts["stale"] += 1  # a newer run has written this pair
            continue
        counts["written"] += 1
        bands[s.band] = bands.get(s.band, 0) + 1
        seen = previous.get("run_id") == message.run_id and previous.get("band") == "automatic"
        if s.band == "automatic" and not seen:
            request = {"pair_key": s.pair_key, "run": message.run_id, "score": round(s.score, 3)}
            merges.send(formats.stamp(request, MERGE_REQUEST_VERSION))
            counts["automatic_sent"] += 1
    for band, n in sorted(bands.items()):
        metrics.count("PairsScored", n, band)
    return counts
