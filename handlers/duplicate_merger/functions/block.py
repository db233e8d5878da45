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
from handlers.duplicate_merger import contract, fanout, reading
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
    stages: QueueSender
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
        QueueSender(config.stages_queue_url),
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

    def splits(contacts: int) -> bool:
        return fanout.splits(contacts, s.portal_size, s.split_above)

    def reserve(contacts: int) -> float:
        return reading.SPLIT_RESERVE_S if splits(contacts) else reading.block_reserve(contacts)

    outcome = reading.read_step(crm, checkpoints, run_id, step, remaining, reserve)
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
    if outcome.state.contacts and splits(outcome.state.contacts):
        return progress | _start_split(service, checkpoints, outcome, now)
    summary = block_run(
        outcome.contacts,
        service.queue,
        PairStore(service.pairs, service.pairs),
        now=now,
        cap=s.block_cap,
        phone_region=s.phone_region,
        pair_ttl_days=s.pair_ttl_days,
        run_id=run_id,
    )
    summary["read_invocations"] = max(1, outcome.state.step)
    metrics.count("CappedBlocks", int(summary["capped_count"]))
    if summary["capped_count"]:
        logger.warning("oversized blocks were capped", extra={"capped": summary["capped"]})
    logger.info("blocking run queued", extra={k: v for k, v in summary.items() if k != "capped"})
    return summary


def _start_split(
    service: Blocking, checkpoints: reading.DynamoCheckpoints, outcome: reading.Outcome,
    now: dt.datetime,
) -> dict[str, Any]:
    """Queue the split run's read stage, one message per saved chunk of the read (a portal
    read in this one invocation is saved first)."""
    s, state = service.config, outcome.state
    if state.chunks == 0:
        chunks = reading.split_chunks(list(outcome.contacts))
        state.chunks = len(chunks)
        checkpoints.save(state, chunks, expected_step=None)
    sent = fanout.start(
        state.run_id, state.contacts, state.chunks, service.stages, cap=s.block_cap,
        region=s.phone_region, partition_contacts=s.partition_contacts, now=now,
    )
    get_logger().info("split run started", extra={"run_id": state.run_id, "read_messages": sent})
    return {"split": True, "read_messages": sent, "chunks": state.chunks}


handler = entry.handler(__name__, contract.BlockSettings, wire, run)
