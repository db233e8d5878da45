"""dm-block: the weekly run (``dm-block-weekly`` schedule), or its own continuation.

Payload ``{"action": "block"}`` from the schedule, ``{"action": "block", "run_id": ..., "step":
n}`` from itself while a large portal is read over several invocations (``reading``). The work
is ``runs.run``; this module reads the settings and builds the collaborators.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

from handlers.common import metrics, settings
from handlers.common.observability import logged
from handlers.duplicate_merger import contract
from handlers.duplicate_merger.runs import run, run_id_for

CHECKPOINT_TTL_DAYS = 2
"""A portal's read checkpoints outlive any run (a run's reads take hours at most)."""


@logged
def handler(event: Any, context: Any) -> dict[str, Any]:
    """Read one step of the CRM; once it is all read, block and queue it."""
    from handlers.common.aws_clients import client, table
    from handlers.common.hubspot import token_from_secret
    from handlers.common.observability import get_logger
    from handlers.common.secrets import default_cache
    from handlers.duplicate_merger import crm as crm_module
    from handlers.duplicate_merger.reading import (
        MAX_STEPS,
        SAVE_RESERVE_S,
        DynamoCheckpoints,
        read_step,
    )
    from handlers.duplicate_merger.store import PairStore, QueueSender

    s = settings.current(contract.BlockSettings)
    logger = get_logger()
    now = dt.datetime.now(dt.UTC)
    run_id = str(event.get("run_id") or run_id_for(now))
    step = int(event.get("step") or 0)
    started = time.monotonic()
    budget = context.get_remaining_time_in_millis() / 1000 if context is not None else 300.0

    def remaining() -> float:
        return budget - (time.monotonic() - started)

    secret = s.crm_read_secret
    crm = crm_module.HubSpotCrm(
        lambda: token_from_secret(default_cache.get_string(secret)),
        s.crm_base_url,
        on_unauthorized=lambda: default_cache.invalidate(secret),
        version=s.hubspot_api_version,
        # No rate-limit wait may eat the time reserved for saving the read.
        deadline=started + budget - SAVE_RESERVE_S / 2,
    )
    pairs = table(s.pairs_table)
    ttl = int((now + dt.timedelta(days=CHECKPOINT_TTL_DAYS)).timestamp())
    outcome = read_step(crm, DynamoCheckpoints(pairs, ttl=ttl), run_id, step, remaining)
    progress = {"run_id": run_id, "step": step, "pages": outcome.pages, **outcome.state.to_item()}
    if outcome.action == "stale":
        logger.warning("duplicate or late continuation ignored", extra=progress)
        return {"continued": False, **progress}
    if outcome.action == "continue":
        if outcome.state.step > MAX_STEPS:
            raise RuntimeError(f"the read of run {run_id} passed {MAX_STEPS} invocations")
        client("lambda").invoke(
            FunctionName=context.function_name,
            InvocationType="Event",
            Payload=json.dumps(
                {"action": contract.BLOCK_ACTION, "run_id": run_id, "step": outcome.state.step}
            ),
        )
        logger.info("portal read continues in a new invocation", extra=progress)
        return {"continued": True, **progress}
    summary = run(
        outcome.contacts,
        QueueSender(s.blocks_queue_url),
        PairStore(pairs, pairs),
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
