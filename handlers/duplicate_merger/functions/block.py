"""dm-block: the weekly run (``dm-block-weekly`` schedule), or its own continuation.

Payload ``{"action": "block"}`` from the schedule, ``{"action": "block", "run_id": ..., "step":
n}`` from itself while a large portal is read over several invocations (``reading``). The work
is ``reading.read_step`` then ``runs.run``; this module wires them.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from handlers.common import aws_clients, entry, metrics
from handlers.common.clock import Clock
from handlers.common.observability import get_logger
from handlers.common.privacy import Where
from handlers.duplicate_merger import contract, deletions, reading
from handlers.duplicate_merger.crm import hubspot
from handlers.duplicate_merger.runs import run as block_run
from handlers.duplicate_merger.runs import run_id_for
from handlers.duplicate_merger.store import PairStore, QueueSender

CHECKPOINT_TTL_DAYS = 2
"""A portal's read checkpoints outlive any run (a run's reads take hours at most)."""


@dataclass(frozen=True)
class Blocking:
    """dm-block's collaborators; the CRM reader is made per invocation (its deadline is the
    invocation's), the Lambda client only when the read continues in a new invocation."""

    config: contract.BlockSettings
    pairs: Any
    queue: QueueSender
    reader: Callable[[float], Any]
    lambda_client: Callable[[], Any]


def wire(
    config: contract.BlockSettings,
    clock: Clock,
    *,
    crm: Callable[[float], Any] | None = None,
    lambda_client: Callable[[], Any] | None = None,
) -> Blocking:
    """``crm`` (deadline -> reader) and ``lambda_client`` replace HubSpot and Lambda when tests
    or the sandbox give them (``entry.registry.override``)."""
    return Blocking(
        config,
        aws_clients.table(config.pairs_table),
        QueueSender(config.blocks_queue_url),
        reader=crm
        or (
            lambda deadline: hubspot(
                config.crm_read_secret,
                config.crm_base_url,
                config.hubspot_api_version,
                clock,
                deadline=deadline,
            )
        ),
        lambda_client=lambda_client or (lambda: aws_clients.client("lambda")),
    )


def run(service: Blocking, event: Any, context: Any, clock: Clock) -> dict[str, Any]:
    """Read one step of the CRM; once it is all read, block and queue it."""
    s = service.config
    logger = get_logger()
    now = clock()
    if event.get("action") == contract.ERASE_DELETED_ACTION:
        return deletions.erase_deleted(event.get("contacts") or [], _where(s))
    run_id = str(event.get("run_id") or run_id_for(now))
    step = int(event.get("step") or 0)
    started = time.monotonic()
    budget = context.get_remaining_time_in_millis() / 1000 if context is not None else 300.0

    def remaining() -> float:
        return budget - (time.monotonic() - started)

    # No rate-limit wait may eat the time reserved for saving the read.
    crm = service.reader(started + budget - reading.SAVE_RESERVE_S / 2)
    ttl = int((now + dt.timedelta(days=CHECKPOINT_TTL_DAYS)).timestamp())
    checkpoints = reading.DynamoCheckpoints(service.pairs, ttl=ttl)
    outcome = reading.read_step(crm, checkpoints, run_id, step, remaining)
    progress = {"run_id": run_id, "step": step, "pages": outcome.pages, **outcome.state.to_item()}
    if outcome.action == "stale":
        logger.warning("duplicate or late continuation ignored", extra=progress)
        return {"continued": False, **progress}
    if outcome.action == "continue":
        if outcome.state.step > reading.MAX_STEPS:
            raise RuntimeError(f"the read of run {run_id} passed {reading.MAX_STEPS} invocations")
        service.lambda_client().invoke(
            FunctionName=context.function_name,
            InvocationType="Event",
            Payload=json.dumps(
                {"action": contract.BLOCK_ACTION, "run_id": run_id, "step": outcome.state.step}
            ),
        )
        logger.info("portal read continues in a new invocation", extra=progress)
        return {"continued": True, **progress}
    seen = deletions.Seen()
    summary = block_run(
        seen.watch(outcome.contacts),
        service.queue,
        PairStore(service.pairs, service.pairs),
        now=now,
        cap=s.block_cap,
        phone_region=s.phone_region,
        pair_ttl_days=s.pair_ttl_days,
        run_id=run_id,
    )
    summary["read_invocations"] = max(1, outcome.state.step)
    # The full read is complete: what dm holds about contacts HubSpot deleted goes.
    summary["deleted_contacts"] = deletions.follow(
        seen,
        (service.pairs, aws_clients.table(s.decisions_table), aws_clients.table(s.merges_table)),
        crm,
        now.timestamp(),
        service.lambda_client().invoke,
        context.function_name if context is not None else contract.BLOCK,
    )
    metrics.count("CappedBlocks", int(summary["capped_count"]))
    if summary["capped_count"]:
        logger.warning("oversized blocks were capped", extra={"capped": summary["capped"]})
    logger.info("blocking run queued", extra={k: v for k, v in summary.items() if k != "capped"})
    return summary


def _where(s: contract.BlockSettings) -> Where:
    names = {
        contract.PAIRS.name: s.pairs_table,
        contract.DECISIONS.name: s.decisions_table,
        contract.MERGES.name: s.merges_table,
        contract.UNDO_BUCKET: s.undo_bucket,
    }
    return Where(names, aws_clients.client("dynamodb"), aws_clients.client("s3"))


handler = entry.handler(__name__, contract.BlockSettings, wire, run)
