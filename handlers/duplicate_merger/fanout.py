"""The split weekly run deployed: one ``dm-stages`` message per partition, a counter per stage.

dm-block starts it (``start``) when the run is larger than one invocation should block
(``splits``); dm-stage runs one message (``process``): one partition of one of ``split.py``'s
stages over the dm-shards bucket, then counts the partition done. The last partition to finish
a stage sends the next stage's messages; the last ``emit`` writes the run summary. The read
stage reads dm-block's checkpointed read (``reading.py``'s ``read#<run>#<n>`` chunks), one
chunk a message, so no invocation holds more than a chunk or a partition.

Exactly once: counting a partition is one conditional UpdateItem of
``split#<run>#<started>#<stage>``
in the pairs table, adding the partition to the set of those done only if it is not in it yet.
DynamoDB applies the writes to one item one after the other, each condition checked against
the item as the write before left it ("Condition expressions", DynamoDB Developer Guide,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html),
so of two partitions finishing at once only one sees the set complete, and a partition
delivered twice is counted once (its second count fails the condition). Each count also
names its partition (``closer``), so the item names the partition that completed the set.
The sender marks the stage ``advanced`` after its sends; if it failed in between, its message
comes back, finds itself the closer and the stage not advanced, and sends them again (the
next stage's counter absorbs any it had sent); a copy of any other partition sends nothing. Every stage rewrites the same objects
(``shards.py``), so a repeated partition changes nothing.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

from botocore.exceptions import ClientError

from handlers.common import formats
from handlers.common.batch import Unusable
from handlers.common.transitions import condition_failed, old_item
from handlers.duplicate_merger import contract, split
from handlers.duplicate_merger import shards as store
from handlers.duplicate_merger.crm import Contact
from handlers.duplicate_merger.shards import Shards
from handlers.duplicate_merger.split import STAGES, SplitPlan

NEXT: dict[str, str | None] = dict(zip(STAGES, (*STAGES[1:], None), strict=True))
SINGLE = frozenset({"reduce", "baseline"})
"""The stages that run once per run; ``read`` runs once per read chunk, the rest per partition."""


def splits(contacts_read: int, portal_size: int, split_above: int) -> bool:
    """The rule: the run is split when the contacts read, or the portal's stated size
    (``systems.dm.portalContacts``, 0 when not given), exceed ``systems.dm.splitAbove``."""
    return max(contacts_read, portal_size) > split_above


@dataclass(frozen=True)
class StageMessage:
    """One partition of one stage of one run, and the run's plan."""

    run_id: str
    stage: str
    part: int
    parts: int
    chunks: int
    cap: int
    region: str
    started_at: str

    @property
    def writers(self) -> int:
        """How many messages (partitions) this stage has."""
        if self.stage == "read":
            return self.chunks
        return 1 if self.stage in SINGLE else self.parts

    def plan(self) -> SplitPlan:
        return SplitPlan(self.run_id, self.parts, self.cap, self.region)

    def body(self) -> str:
        return json.dumps(formats.stamp(asdict(self), contract.STAGE_MESSAGE_VERSION))

    def following(self) -> list[StageMessage]:
        """The next stage's messages (none after ``emit``)."""
        stage = NEXT[self.stage]
        if stage is None:
            return []
        first = replace(self, stage=stage, part=0)
        return [replace(first, part=p) for p in range(first.writers)]

    @classmethod
    def parse(cls, body: str) -> StageMessage:
        """``Unusable`` (never acknowledged: to the DLQ) for anything but a stage message."""
        try:
            data = json.loads(body)
        except ValueError as err:
            raise Unusable(f"dm stage message: not JSON ({err})") from err
        formats.read(data, current=contract.STAGE_MESSAGE_VERSION, what="dm stage message")
        try:
            found = cls(
                str(data["run_id"]),
                str(data["stage"]),
                int(data["part"]),
                int(data["parts"]),
                int(data["chunks"]),
                int(data["cap"]),
                str(data["region"]),
                str(data["started_at"]),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise Unusable(f"dm stage message: {err!r}") from err
        if found.stage not in STAGES or not 0 <= found.part < found.writers:
            raise Unusable(f"dm stage message: no partition {found.part} of stage {found.stage!r}")
        return found


def start(
    run_id: str,
    contacts: int,
    chunks: int,
    stages: Sender,
    *,
    cap: int,
    region: str,
    partition_contacts: int,
    now: dt.datetime,
) -> int:
    """The read stage's messages, one per saved read chunk; returns how many were sent."""
    plan = SplitPlan.for_contacts(run_id, contacts, cap=cap, partition_contacts=partition_contacts)
    first = StageMessage(run_id, "read", 0, plan.parts, chunks, cap, region, now.isoformat())
    return stages.send_all(replace(first, part=n).body() for n in range(chunks))


class Sender(Protocol):
    def send_all(self, bodies: Iterable[str]) -> int: ...


class SummaryWriter(Protocol):
    def put_run_summary(self, summary: Mapping[str, Any], *, ttl: int) -> None: ...


class StageCounter:
    """The stages' counters: ``split#<run>#<started>#<stage>`` items of the pairs table (see the module)."""

    def __init__(self, table: Any) -> None:
        self.table = table

    @staticmethod
    def key(message: StageMessage) -> dict[str, str]:
        """One counter per stage of one start of the run: a week's run started again (a
        retried dm-block) counts afresh instead of finding the first start's stages done."""
        run = f"{message.run_id}#{message.started_at}"
        return {"pair_key": f"{contract.SPLIT_PREFIX}{run}#{message.stage}"}

    def finish(self, message: StageMessage, *, ttl: int) -> bool:
        """Count ``message``'s partition done; True when this delivery must send the next
        stage's messages: it completed the stage, or it is the redelivery of the partition
        that completed it (``closer``: every count names itself, so the last one stays) and
        finds it not advanced."""
        item: Mapping[str, Any]
        try:
            item = self.table.update_item(
                Key=self.key(message),
                UpdateExpression="ADD done :part SET #ttl = :ttl, closer = :n",
                ConditionExpression="attribute_not_exists(done) OR NOT contains(done, :n)",
                ExpressionAttributeNames={"#ttl": "ttl"},
                ExpressionAttributeValues={":part": {message.part}, ":n": message.part, ":ttl": ttl},
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )["Attributes"]
        except ClientError as err:
            if not condition_failed(err):
                raise
            item = old_item(err) or {}  # what the item held (ALL_OLD)
            if item.get("advanced") or item.get("closer") != message.part:
                return False  # a copy, or the closer's redelivery after its sends
        return len(item.get("done") or ()) == message.writers

    def advanced(self, message: StageMessage) -> None:
        """The next stage's messages are sent."""
        self.table.update_item(
            Key=self.key(message),
            UpdateExpression="SET advanced = :yes",
            ExpressionAttributeValues={":yes": True},
        )


def run_stage(
    message: StageMessage,
    shards: Shards,
    chunk: Callable[[str, int], list[Contact]],
    blocks: Sender,
) -> None:
    """Run one partition of one stage (``split.py``'s stage functions, unchanged)."""
    plan, part, stage = message.plan(), message.part, message.stage
    if stage == "read":
        split.read_stage(shards, plan, part, chunk(message.run_id, part))
    elif stage == "count":
        split.count_stage(shards, plan, part, message.chunks)
    elif stage == "join":
        split.join_stage(shards, plan, part, message.chunks)
    elif stage == "tally":
        split.tally_stage(shards, plan, part)
    elif stage == "reduce":
        split.reduce_stage(shards, plan, message.chunks)
    elif stage == "evidence":
        split.evidence_stage(shards, plan, part)
    elif stage == "baseline":
        split.baseline_stage(shards, plan)
    else:  # emit: what it sent and the capped values it windowed, for the run summary
        capped: set[tuple[str, str]] = set()

        def send(bodies: Iterable[str]) -> int:
            return blocks.send_all(_noting_capped(bodies, capped))

        sent = split.emit_stage(shards, plan, part, send)
        store.put(shards, plan.key("emitted", 0, part), {"messages": sent, "capped": sorted(capped)})


def _noting_capped(bodies: Iterable[str], capped: set[tuple[str, str]]) -> Iterable[str]:
    for body in bodies:
        capped.update((b["k"], b["v"]) for b in json.loads(body)["blocks"] if "w" in b)
        yield body


def summary(message: StageMessage, shards: Shards) -> dict[str, Any]:
    """The run summary (``runs.run``'s fields) from the reduced counts and every emit's note."""
    plan = message.plan()
    counts = split.RunCounts.from_wire(store.get(shards, f"{plan.run_id}/counts"))
    baseline = float(store.get(shards, f"{plan.run_id}/baseline"))
    emitted = list(store.read_all(shards, plan.key("emitted", 0)))
    if len(emitted) != plan.parts:
        raise split.MissingShard(f"emit: {len(emitted)} of {plan.parts} partitions' notes found")
    capped = {tuple(c) for e in emitted for c in e["capped"]}
    comparisons = counts.tally.comparisons
    return {
        "run_id": plan.run_id,
        "started_at": message.started_at,
        "contacts": counts.total,
        "comparisons": comparisons,
        "comparisons_per_contact": round(comparisons / max(counts.total, 1), 3),
        "messages": sum(int(e["messages"]) for e in emitted),
        "sure_pairs": counts.tally.sure,
        "baseline_bits": round(baseline, 3),
        "capped_count": len(capped),
        "split": {"partitions": plan.parts, "read_chunks": message.chunks},
    }


@dataclass(frozen=True)
class Stages:
    """dm-stage's collaborators."""

    shards: Shards
    chunk: Callable[[str, int], list[Contact]]
    stages: Sender
    blocks: Sender
    counter: StageCounter
    summaries: SummaryWriter


def process(service: Stages, message: StageMessage, *, ttl: int) -> dict[str, Any]:
    """One message: its partition's stage, its count, and the next stage's messages if it
    finished the stage (the run summary after the last emit)."""
    run_stage(message, service.shards, service.chunk, service.blocks)
    outcome: dict[str, Any] = {"run_id": message.run_id, "stage": message.stage, "part": message.part}
    if not service.counter.finish(message, ttl=ttl):
        return {**outcome, "last": False}
    following = message.following()
    if following:
        outcome["sent"] = service.stages.send_all(m.body() for m in following)
    else:
        outcome["summary"] = summary(message, service.shards)
        service.summaries.put_run_summary(outcome["summary"], ttl=ttl)
    service.counter.advanced(message)
    return {**outcome, "last": True}
