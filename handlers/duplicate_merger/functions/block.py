"""dm-block: the weekly run (``dm-block-weekly`` schedule), or its own continuation.

Payload ``{"action": "block"}`` from the schedule, ``{"action": "block", "run_id": ..., "step":
n, "read": ..., "started": ...}`` from itself while a large portal is read over several
invocations (``reading``). Whether a run reads the whole CRM or only the week's changes
(``incremental``) is decided from the stored index when the run starts (the first run, and
every ``full_read_every_weeks``, read in full), not by the schedule: one schedule, and a lost
or expired index can only make a run read more. The work is ``reading.read_step`` then
``runs.run``, or, above ``split_above``, the split run's start (``fanout``: dm-stage takes it
from there; such a portal is read in full every week). ``{"action": "erase-deleted", "contacts":
[...]}`` from itself after a full read: erase what dm holds about contacts HubSpot deleted
(``deletions``).
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
from handlers.duplicate_merger import contract, deletions, fanout, incremental, reading
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
    """Read one step of the CRM (all of it, or the week's changes); once read, block and queue.
    A week that cannot be read from its changes (a burst past the search's window, an index
    chunk erased) is read in full instead, from the first page."""
    now = clock()
    if event.get("action") == contract.ERASE_DELETED_ACTION:
        return deletions.erase_deleted(event.get("contacts") or [], _where(service.config))
    if event.get("action") == contract.FOLLOW_DELETIONS_ACTION:
        return Run(service, context, now, str(event["run_id"]), now).follow_saved_read()
    invocation = Run(
        service,
        context,
        now,
        str(event.get("run_id") or run_id_for(now)),
        dt.datetime.fromisoformat(str(event["started"])) if event.get("started") else now,
    )
    stored = invocation.index.load()
    asked = event.get("read")
    kind: incremental.Read = "full"
    if stored is not None and not invocation.splits(stored.contacts):
        kind = asked if asked in ("full", "changes") else incremental.read_kind(
            stored, invocation.started_at, service.config.full_read_every_weeks
        )
    # A week's read whose index expired meanwhile goes on in full, from the first page (its
    # cursor is a search window's, not the contacts list's).
    step = int(event.get("step") or 0) if asked in (None, kind) else 0
    try:
        return invocation.step(step, kind, stored)
    except (incremental.WindowStuck, incremental.IndexIncomplete) as err:
        get_logger().warning("this week is read in full", extra={"why": str(err)})
        return invocation.step(0, "full", None)


class Run:
    """One invocation of a run: its clock, its budget, the pairs table's read state and index."""

    def __init__(
        self, service: Blocking, context: Any, now: dt.datetime, run_id: str, started_at: dt.datetime
    ) -> None:
        self.service, self.context, self.now = service, context, now
        self.run_id, self.started_at = run_id, started_at
        self.started = time.monotonic()
        self.budget = context.get_remaining_time_in_millis() / 1000 if context is not None else 300.0
        # No rate-limit wait may eat the time reserved for saving the read.
        self.crm = service.reader(self.started + self.budget - reading.SAVE_RESERVE_S / 2)
        ttl = int((now + dt.timedelta(days=CHECKPOINT_TTL_DAYS)).timestamp())
        self.checkpoints = reading.DynamoCheckpoints(service.pairs, ttl=ttl)
        index_ttl = int((now + dt.timedelta(days=service.config.pair_ttl_days)).timestamp())
        self.index = incremental.IndexTable(service.pairs, ttl=index_ttl)

    def remaining(self) -> float:
        return self.budget - (time.monotonic() - self.started)

    def splits(self, contacts: int) -> bool:
        """Whether a run of this many contacts is split (``fanout.splits``): then every week is
        a full read, since a week's read of the changes blocks the stored index whole."""
        s = self.service.config
        return fanout.splits(contacts, s.portal_size, s.split_above)

    def reserve(self, contacts: int) -> float:
        return reading.SPLIT_RESERVE_S if self.splits(contacts) else reading.block_reserve(contacts)

    def step(
        self, step: int, kind: incremental.Read, stored: incremental.IndexState | None
    ) -> dict[str, Any]:
        s, logger, run_id = self.service.config, get_logger(), self.run_id
        if stored is not None and kind == "changes":
            changes = incremental.WindowedChanges(self.crm, incremental.since_ms(stored))
            # A week blocks the whole stored index, not only what it read.
            outcome = reading.read_step(
                changes, self.checkpoints, run_id, step, self.remaining,
                lambda _: reading.block_reserve(stored.contacts),
            )
        else:
            kind = "full"
            outcome = reading.read_step(self.crm, self.checkpoints, run_id, step, self.remaining, self.reserve)
        progress = {"run_id": run_id, "step": step, "read": kind, "pages": outcome.pages, **outcome.state.to_item()}
        if outcome.action == "stale":
            logger.warning("duplicate or late continuation ignored", extra=progress)
            return {"continued": False, **progress}
        if outcome.action == "continue":
            if outcome.state.step > reading.MAX_STEPS:
                raise RuntimeError(f"the read of run {run_id} passed {reading.MAX_STEPS} invocations")
            self.service.lambda_client().invoke(
                FunctionName=self.context.function_name,
                InvocationType="Event",
                Payload=json.dumps(
                    {
                        "action": contract.BLOCK_ACTION,
                        "run_id": run_id,
                        "step": outcome.state.step,
                        "read": kind,
                        "started": self.started_at.isoformat(),
                    }
                ),
            )
            logger.info("portal read continues in a new invocation", extra=progress)
            return {"continued": True, **progress}
        if kind == "full" and outcome.state.contacts and self.splits(outcome.state.contacts):
            started = _start_split(self.service, self.checkpoints, outcome, self.now)
            # The split run holds no list of every id: a fresh invocation reads the saved read.
            self.service.lambda_client().invoke(
                FunctionName=self.context.function_name if self.context is not None else contract.BLOCK,
                InvocationType="Event",
                Payload=json.dumps({"action": contract.FOLLOW_DELETIONS_ACTION, "run_id": run_id}),
            )
            return progress | started
        writer = incremental.IndexWriter(self.index, f"{run_id}.{int(self.started_at.timestamp())}")
        contacts = outcome.contacts
        # Only a full read sees every contact HubSpot still has, so only it notices deletions.
        seen = deletions.Seen() if kind == "full" else None
        if seen is not None:
            contacts = seen.watch(contacts)
        blocker = None
        changed: dict[str, dict[str, Any]] = {}
        if stored is not None and kind == "changes":
            changed = dict(outcome.contacts)  # read twice (a window's edge): its later version
            contacts = incremental.updated(self.index.contacts(stored), changed)

            def blocker(rid: str, profiles: list[Any]) -> Any:
                return incremental.week_blocking(rid, profiles, set(changed), stored, cap=s.block_cap)

        summary, blocking = block_run(
            writer.tee(contacts),
            self.service.queue,
            PairStore(self.service.pairs, self.service.pairs),
            now=self.now,
            cap=s.block_cap,
            phone_region=s.phone_region,
            pair_ttl_days=s.pair_ttl_days,
            run_id=run_id,
            blocker=blocker,
            extra={"read": kind, "changed": len(changed)},
        )
        writer.commit(blocking, self.started_at, stored, kind)
        summary["read_invocations"] = max(1, outcome.state.step)
        if seen is not None:
            # The full read is complete: what dm holds about contacts HubSpot deleted goes.
            summary["deleted_contacts"] = self.follow(seen)
        metrics.count("CappedBlocks", int(summary["capped_count"]))
        if summary["capped_count"]:
            logger.warning("oversized blocks were capped", extra={"capped": summary["capped"]})
        logger.info("blocking run queued", extra={k: v for k, v in summary.items() if k != "capped"})
        return summary

    def follow(self, seen: deletions.Seen) -> int:
        """Erase what dm holds about contacts a complete read did not meet and HubSpot deleted."""
        s = self.service.config
        return deletions.follow(
            seen,
            (self.service.pairs, aws_clients.table(s.decisions_table), aws_clients.table(s.merges_table)),
            self.crm,
            self.now.timestamp(),
            lambda **call: self.service.lambda_client().invoke(**call),  # a client only if needed
            self.context.function_name if self.context is not None else contract.BLOCK,
        )

    def follow_saved_read(self) -> dict[str, Any]:
        """A split run's deletions: every id of its saved read (chunks in the pairs table, kept
        two days), then ``follow``; only ids are held, never the contacts."""
        state = self.checkpoints.load(self.run_id)
        if state is None or not state.done:
            get_logger().warning("no complete saved read to follow deletions from", extra={"run_id": self.run_id})
            return {"run_id": self.run_id, "deleted_contacts": 0}
        seen = deletions.Seen()
        for _ in seen.watch(c for chunk in self.checkpoints.chunks(state) for c in reading.decode_chunk(chunk)):
            pass
        return {"run_id": self.run_id, "deleted_contacts": self.follow(seen)}


def _where(s: contract.BlockSettings) -> Where:
    names = {
        contract.PAIRS.name: s.pairs_table,
        contract.DECISIONS.name: s.decisions_table,
        contract.MERGES.name: s.merges_table,
        contract.UNDO_BUCKET: s.undo_bucket,
    }
    return Where(names, aws_clients.client("dynamodb"), aws_clients.client("s3"))


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
