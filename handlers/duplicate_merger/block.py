"""dm-block: the weekly run. Reads every contact, forms capped blocks, queues them for scoring.

Invoked by the ``dm-block-weekly`` schedule. The run id is the ISO week of the invocation
(``2026-W32``), so a retried invocation in the same week rewrites the same run, and pair rows of
an older run never overwrite a newer one (dm-score's condition). The capped blocks are
reported in the log and in the run summary row (``run#<id>`` and ``run#latest`` in the pairs
table), which the weekly digest shows: a cap is never silent.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from handlers.common import metrics
from handlers.common.observability import logged
from handlers.duplicate_merger.pipeline import encode_messages, profiles_from, run_blocking

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
) -> dict[str, Any]:
    """Block every contact and queue the blocks; returns (and records) the run summary.
    ``run_id`` is the week the run started in (a continuation may run after midnight)."""
    run_id = run_id or run_id_for(now)
    profiles = profiles_from(contacts, default_region=phone_region)
    blocking = run_blocking(run_id, profiles, cap=cap)
    messages = queue.send_all(encode_messages(blocking))
    report = blocking.report
    summary = {
        "run_id": run_id,
        "started_at": now.isoformat(),
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
    return summary


@logged
def handler(event: Any, context: Any) -> dict[str, Any]:
    """Scheduled entry point (payload ``{"action": "block"}``), or its own continuation
    (``{"action": "block", "run_id": ..., "step": n}``) while a large portal is read over
    several invocations (``reading``)."""
    import time

    from handlers.common.aws_clients import client, table
    from handlers.common.hubspot import token_from_secret
    from handlers.common.observability import get_logger
    from handlers.common.secrets import default_cache, secret_id_from_env
    from handlers.duplicate_merger.crm import HubSpotCrm
    from handlers.duplicate_merger.reading import (
        MAX_STEPS,
        SAVE_RESERVE_S,
        DynamoCheckpoints,
        read_step,
    )
    from handlers.duplicate_merger.store import PairStore, QueueSender

    logger = get_logger()
    now = dt.datetime.now(dt.UTC)
    run_id = str(event.get("run_id") or run_id_for(now))
    step = int(event.get("step") or 0)
    started = time.monotonic()
    budget = context.get_remaining_time_in_millis() / 1000 if context is not None else 300.0

    def remaining() -> float:
        return budget - (time.monotonic() - started)

    pair_ttl_days = int(os.environ.get("PAIR_TTL_DAYS", "30"))
    secret = secret_id_from_env("CRM_READ_SECRET")
    crm = HubSpotCrm(
        lambda: token_from_secret(default_cache.get_string(secret)),
        os.environ["CRM_BASE_URL"],
        on_unauthorized=lambda: default_cache.invalidate(secret),
        version=os.environ.get("HUBSPOT_API_VERSION"),
        # No rate-limit wait may eat the time reserved for saving the read.
        deadline=started + budget - SAVE_RESERVE_S / 2,
    )
    pairs = table(os.environ["PAIRS_TABLE"])
    ttl = int((now + dt.timedelta(days=2)).timestamp())
    outcome = read_step(crm, DynamoCheckpoints(pairs, ttl=ttl), run_id, step, remaining)
    progress = {"run_id": run_id, "step": step, "pages": outcome.pages, **outcome.state.to_item()}
    if outcome.action == "stale":
        logger.warning("duplicate or late continuation ignored", extra=progress)
        return {"continued": False, **progress}
    if outcome.action == "continue":
        if outcome.state.step > MAX_STEPS:
            raise RuntimeError(f"the read of run {run_id} passed {MAX_STEPS} invocations")
        client("lambda").invoke(
            FunctionName=os.environ["AWS_LAMBDA_FUNCTION_NAME"],
            InvocationType="Event",
            Payload=json.dumps({"action": "block", "run_id": run_id, "step": outcome.state.step}),
        )
        logger.info("portal read continues in a new invocation", extra=progress)
        return {"continued": True, **progress}
    summary = run(
        outcome.contacts,
        QueueSender(os.environ["BLOCKS_QUEUE_URL"]),
        PairStore(pairs, pairs),
        now=now,
        cap=int(os.environ.get("BLOCK_CAP", "50")),
        phone_region=os.environ.get("PHONE_REGION", "US"),
        pair_ttl_days=pair_ttl_days,
        run_id=run_id,
    )
    summary["read_invocations"] = max(1, outcome.state.step)
    metrics.count("CappedBlocks", int(summary["capped_count"]))
    if summary["capped_count"]:
        logger.warning("oversized blocks were capped", extra={"capped": summary["capped"]})
    logger.info("blocking run queued", extra={k: v for k, v in summary.items() if k != "capped"})
    return summary
