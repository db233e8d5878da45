"""dm-block's weekly run: every contact read, capped blocks formed and queued for scoring.

The entry point is ``functions/block.py`` (the ``dm-block-weekly`` schedule). The run id is the
ISO week of the invocation (``2026-W32``), so a retried invocation in the same week rewrites the same run, and pair rows of
an older run never overwrite a newer one (dm-score's condition). The capped blocks are
reported in the log and in the run summary row (``run#<id>`` and ``run#latest`` in the pairs
table), which the weekly digest shows: a cap is never silent.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from handlers.duplicate_merger.matcher import Profile
from handlers.duplicate_merger.pipeline import (
    BlockingRun,
    encode_messages,
    profiles_from,
    run_blocking,
)

Blocker = Callable[[str, list[Profile]], BlockingRun]
"""From the run id and every contact's profile to the run's blocks (a full run's by default;
a week's keeps the blocks with a changed contact, ``incremental.week_blocking``)."""

REPORTED_CAPPED = 20
"""Capped blocks listed by value in the summary (all are counted)."""


class Sender(Protocol):
    def send_all(self, bodies: Iterable[str]) -> int: ...


class SummaryWriter(Protocol):
    def put_run_summary(self, summary: Mapping[str, Any], *, ttl: int) -> None: ...


def run_id_for(now: dt.datetime) -> str:
    """The ISO week of ``now``: ``2026-W05``."""
    year, week, _ = now.isocalendar()
    return f"{year}-W{week:02d}"


def _mask(key: str, value: str) -> str:
    """Capped values are shown to an operator: a mailbox or phone partly hidden."""
    if key in ("email", "phone") and len(value) > 6:
        return value[:3] + "…" + value[-3:]
    return value


def run(
    contacts: Iterable[tuple[str, Any]],
    queue: Sender,
    summaries: SummaryWriter,
    *,
    now: dt.datetime,
    cap: int,
    phone_region: str,
    pair_ttl_days: int,
    run_id: str | None = None,
    blocker: Blocker | None = None,
    extra: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], BlockingRun]:
    """Block every contact and queue the blocks; returns (and records) the run summary, with
    ``extra`` in it, and the run. ``run_id`` is the week the run started in (a continuation
    may run after midnight)."""
    run_id = run_id or run_id_for(now)
    profiles = profiles_from(contacts, default_region=phone_region)
    blocking = (blocker or (lambda rid, ps: run_blocking(rid, ps, cap=cap)))(run_id, profiles)
    messages = queue.send_all(encode_messages(blocking))
    report = blocking.report
    summary = {
        "run_id": run_id,
        "started_at": now.isoformat(),
        **(extra or {}),
        "contacts": report.contacts,
        "blocks": report.blocks,
        "comparisons": report.comparisons,
        "comparisons_per_contact": round(report.comparisons_per_contact, 3),
        "messages": messages,
        "sure_pairs": blocking.sure_pairs,
        "baseline_bits": round(blocking.baseline, 3),
        "capped_count": len(report.capped),
        "capped": [
            {"key": c.key, "value": _mask(c.key, c.value), "size": c.size, "windows": c.windows}
            for c in sorted(report.capped, key=lambda c: (-c.size, c.key, c.value))[
                :REPORTED_CAPPED
            ]
        ],
    }
    ttl = int((now + dt.timedelta(days=pair_ttl_days)).timestamp())
    summaries.put_run_summary(summary, ttl=ttl)
    return summary, blocking
