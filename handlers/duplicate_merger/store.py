"""AWS adapters: the pairs, decisions and merges tables, the undo bucket, the two queues.

Every write that must happen at most once is a conditional write: a decision is claimed only
where none exists (with both records' locks and the link marker, in one transaction); a lock
only where none is held (or a crashed holder's lease ran out); a pair row only by a run at
least as new as the one that wrote it; a merge's state moves only from the state expected and
only by the request holding it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from handlers.common.aws_clients import client, table
from handlers.common.transitions import (
    TxResult,
    condition_failed,
    put_if_absent,
    transact,
    tx_delete,
    tx_put,
    tx_update,
)
from handlers.duplicate_merger.contract import CLAIMS_INDEX, DECISIONS_TTL, NOTES_KEEP_DAYS
from handlers.duplicate_merger.merging import (
    TRANSIENT,
    Claim,
    ClaimLost,
    LinkUse,
    Lost,
    Settlement,
)
from handlers.duplicate_merger.pipeline import CandidatePair

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

SQS_BATCH_BYTES = 250_000
RUN_LATEST = "run#latest"


def calibration_key(run_id: str) -> str:
    """The pairs-table item holding a run's calibrated bands (``PairStore.note_calibration``)."""
    return f"run#{run_id}#calibration"


def _decimal(value: float) -> Decimal:
    return Decimal(str(round(value, 3)))


def _plain(value: Any) -> Any:
    """DynamoDB's Decimals back to int/float, recursively (for pages and JSON)."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# Pairs (dm-score writes, dm-merge reads) -------------------------------------------------


class PairStore:
    """The pairs table and the decisions lookup dm-score needs."""

    def __init__(self, pairs: Table, decisions: Table) -> None:
        self.pairs = pairs
        self.decisions = decisions

    def decided(self, pair_key: str) -> bool:
        """Whether a person (or an automatic merge) has decided this pair (Query, one key)."""
        answer = self.decisions.query(
            KeyConditionExpression="pair_key = :k",
            ExpressionAttributeValues={":k": pair_key},
            ProjectionExpression="pair_key",
            Limit=1,
        )
        return bool(answer.get("Items"))

    def upsert(
        self,
        cand: CandidatePair,
        *,
        run_id: str,
        ttl: int,
        contacts: Mapping[str, Mapping[str, str]],
    ) -> Mapping[str, Any] | None:
        """Write the pair's row for ``run_id``; None if a newer run already wrote it.

        Returns the row's previous attributes ({} for a new row), so the caller can tell a
        first sighting in this run from a redelivery.
        """
        s = cand.scored
        names = {"#run": "run_id", "#ttl": "ttl", "#review": "review"}
        values: dict[str, Any] = {
            ":run": run_id,
            ":score": _decimal(s.score),
            ":baseline": _decimal(s.baseline),
            ":terms": [
                {**t.to_item(), "rarity": _decimal(t.rarity), "weight": _decimal(t.weight)}
                for t in s.terms
            ],
            ":against": [{"reason": a.reason, "strength": _decimal(a.strength)} for a in s.against],
            ":band": s.band,
            ":evidence": s.evidence,
            ":blocked": list(cand.blocked_by),
            ":why": s.explanation,
            ":ttl": ttl,
            ":contacts": {k: dict(v) for k, v in contacts.items()},
        }
        sets = [
            "#run = :run",
            "score = :score",
            "baseline = :baseline",
            "terms = :terms",
            "against = :against",
            "band = :band",
            "evidence = :evidence",
            "blocked_by = :blocked",
            "explanation = :why",
            "#ttl = :ttl",
            "contacts = :contacts",
        ]
        update = "SET " + ", ".join(sets)
        if s.band in ("automatic", "propose"):
            values[":review"] = f"{run_id}#{s.band}"
            update += ", #review = :review"
        else:
            update += " REMOVE #review"
        try:
            answer = self.pairs.update_item(
                Key={"pair_key": s.pair_key},
                UpdateExpression=update,
                ConditionExpression="attribute_not_exists(#run) OR #run <= :run",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                ReturnValues="ALL_OLD",
            )
        except Exception as err:
            if condition_failed(err):
                return None
            raise
        return dict(answer.get("Attributes") or {})

    def note_calibration(self, run_id: str, summary: Mapping[str, Any], *, ttl: int) -> None:
        """The bands the reviewer's decisions gave this run (``ClassCalibration.summary``), as
        ``run#<id>#calibration`` for the digest. Every container of the run writes the same
        item (the same decisions give the same bands), so a repeat changes nothing."""
        self.pairs.update_item(
            Key={"pair_key": calibration_key(run_id)},
            UpdateExpression="SET #summary = :summary, #ttl = :ttl",
            ExpressionAttributeNames={"#summary": "summary", "#ttl": "ttl"},
            ExpressionAttributeValues={":summary": _dynamo(dict(summary)), ":ttl": ttl},
        )

    def put_run_summary(self, summary: Mapping[str, Any], *, ttl: int) -> None:
        """dm-block's report of a run: as ``run#<id>`` and as ``run#latest``."""
        item = {**_dynamo(summary), "ttl": ttl}
        self.pairs.put_item(Item={**item, "pair_key": f"run#{summary['run_id']}"})
        self.pairs.put_item(Item={**item, "pair_key": RUN_LATEST})


def _dynamo(value: Any) -> Any:
    if isinstance(value, float):
        return _decimal(value)
    if isinstance(value, dict):
        return {k: _dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_dynamo(v) for v in value]
    return value


class PairReader:
    """What dm-merge reads from the pairs table: one pair, a run's review list, the run."""

    def __init__(self, pairs: Table, review_index: str) -> None:
        self.pairs = pairs
        self.index = review_index

    def get(self, pair_key: str) -> dict[str, Any] | None:
        item = self.pairs.get_item(Key={"pair_key": pair_key}).get("Item")
        return None if item is None else _plain(dict(item))

    def shown(self, pair_key: str) -> tuple[float, str] | None:
        """The pair's score and evidence class as its row holds them (what the reviewer saw),
        or None for a pair without a row or one written before rows held a class."""
        item = self.get(pair_key)
        if not item or "score" not in item or "evidence" not in item:
            return None
        return float(item["score"]), str(item["evidence"])

    def review(self, run_id: str, band: str) -> Iterator[dict[str, Any]]:
        """The run's pairs in one band, best score first."""
        kwargs: dict[str, Any] = {
            "IndexName": self.index,
            "KeyConditionExpression": "review = :r",
            "ExpressionAttributeValues": {":r": f"{run_id}#{band}"},
            "ScanIndexForward": False,
        }
        while True:
            answer = self.pairs.query(**kwargs)
            for item in answer.get("Items", []):
                yield _plain(dict(item))
            last = answer.get("LastEvaluatedKey")
            if not last:
                return
            kwargs["ExclusiveStartKey"] = last


# Reviewer decision counters (dm-merge adds, dm-score reads) ------------------------------


NOTES_PREFIX = "notes#"
"""Key prefix of the weekly notes for the digest in the decisions table (``notes#2026-W05``):
claims the sweep finished, addresses a merge could not keep (never a pair key: no contact id
is "notes")."""
TALLY_PREFIX = "calibration#"
"""Key prefix of the counter items in the decisions table (never a pair key: no contact id
is "calibration")."""


class DecisionTally:
    """``merging.Tally`` and its reader on the decisions table: one item per ISO week
    (``calibration#2026-W05``) holding one number attribute per counter
    (``calibration.counter_name``). dm-merge adds with UpdateItem ``ADD`` (atomic, so two
    decisions at once both count); dm-score reads each week with a one-key Query."""

    def __init__(self, decisions: Table) -> None:
        self.decisions = decisions

    def count(self, week: str, changes: Mapping[str, int]) -> None:
        if not changes:
            return
        names = {f"#c{i}": name for i, name in enumerate(sorted(changes))}
        values = {f":n{i}": int(changes[name]) for i, name in enumerate(sorted(changes))}
        self.decisions.update_item(
            Key={"pair_key": TALLY_PREFIX + week},
            UpdateExpression="ADD " + ", ".join(f"#c{i} :n{i}" for i in range(len(names))),
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )

    def counts(self, weeks: Iterable[str]) -> dict[str, int]:
        """The counters summed over ``weeks`` (a week nobody decided in adds nothing)."""
        total: dict[str, int] = {}
        for week in weeks:
            answer = self.decisions.query(
                KeyConditionExpression="pair_key = :k",
                ExpressionAttributeValues={":k": TALLY_PREFIX + week},
                ConsistentRead=True,
            )
            for item in answer.get("Items", []):
                for name, value in item.items():
                    if name != "pair_key" and isinstance(value, int | Decimal):
                        total[name] = total.get(name, 0) + int(value)
        return total


# Decisions, merges, locks, links (dm-merge) ----------------------------------------------


class DynamoLedger:
    """``merging.Ledger`` on the decisions and merges tables.

    The pair's decision item (dm-decisions) is the one serialisation point: a claim moves it to
    ``merging`` / ``undoing`` together with both records' ``lock#`` items and the link's
    ``link#`` marker (dm-merges) in one ``TransactWriteItems``, and a settlement ends all of
    them in another. Reads are strongly consistent, so a request sees the claim it lost to.
    """

    def __init__(self, merges: Table, decisions: Table, claims_index: str = CLAIMS_INDEX) -> None:
        self.merges = merges
        self.decisions = decisions
        self.claims_index = claims_index

    def expired_claims(self, now: int) -> list[Mapping[str, Any]]:
        """Claims (``merging``, ``undoing``) whose lease ran out before ``now``, oldest first.

        The sparse ``by-claim`` index holds only decision items with ``lease_until``, which only
        a claim in flight has (a settlement replaces the item without it), so this reads the
        claims and nothing else. GSI reads are eventually consistent: the sweep re-reads each
        item before it acts (``MergeService.sweep``)."""
        found: list[Mapping[str, Any]] = []
        for kind in TRANSIENT:
            kwargs: dict[str, Any] = {
                "IndexName": self.claims_index,
                "KeyConditionExpression": "#d = :kind AND lease_until < :now",
                "ExpressionAttributeNames": {"#d": "decision"},
                "ExpressionAttributeValues": {":kind": kind, ":now": now},
            }
            while True:
                answer = self.decisions.query(**kwargs)
                found.extend(_plain(dict(item)) for item in answer.get("Items", []))
                last = answer.get("LastEvaluatedKey")
                if not last:
                    break
                kwargs["ExclusiveStartKey"] = last
        return sorted(found, key=lambda item: (int(item.get("lease_until") or 0), str(item["pair_key"])))

    def note(self, week: str, entry: Mapping[str, Any]) -> None:
        """``merging.Notes``: append ``entry`` to the week's ``notes#<week>`` item, which the
        digest lists (one UpdateItem with ``list_append``: two notes at once both land)."""
        year, number = week.split("-W")
        began = dt.datetime.combine(dt.date.fromisocalendar(int(year), int(number), 1), dt.time(), dt.UTC)
        self.decisions.update_item(
            Key={"pair_key": NOTES_PREFIX + week},
            UpdateExpression=(
                "SET entries = list_append(if_not_exists(entries, :none), :entry), #ttl = :ttl"
            ),
            ExpressionAttributeNames={"#ttl": DECISIONS_TTL},
            ExpressionAttributeValues={
                ":none": [],
                ":entry": [_dynamo(dict(entry))],
                ":ttl": int((began + dt.timedelta(days=NOTES_KEEP_DAYS)).timestamp()),
            },
        )

    def notes(self, weeks: Iterable[str]) -> list[Mapping[str, Any]]:
        """The entries noted in ``weeks``, in the order they were noted."""
        found: list[Mapping[str, Any]] = []
        for week in weeks:
            item = self._get(self.decisions, {"pair_key": NOTES_PREFIX + week}) or {}
            found.extend(dict(e) for e in item.get("entries") or [])
        return found

    def _get(self, table: Table, key: Mapping[str, str]) -> Mapping[str, Any] | None:
        item = table.get_item(Key=dict(key), ConsistentRead=True).get("Item")
        return None if item is None else _plain(dict(item))

    def decision(self, pair_key: str) -> Mapping[str, Any] | None:
        return self._get(self.decisions, {"pair_key": pair_key})

    def merge(self, merge_id: str) -> Mapping[str, Any] | None:
        return self._get(self.merges, {"merge_id": merge_id})

    def lock(self, record_id: str) -> Mapping[str, Any] | None:
        return self._get(self.merges, {"merge_id": f"lock#{record_id}"})

    def link_used(self, token_id: str) -> bool:
        """Whether the link's single-use marker is there (it was consumed by a claim)."""
        return self._get(self.merges, {"merge_id": f"link#{token_id}"}) is not None

    def _transact(self, writes: list[dict[str, Any]]) -> TxResult:
        return transact(self.merges, writes)

    def claim(self, claim: Claim, now: int) -> Lost | None:
        d, m = self.decisions.name, self.merges.name
        hold = {":h": claim.holder, ":l": claim.lease_until}
        # A handover takes a click's live claim; any other takeover only an abandoned one.
        takeover = "#d = :kind AND holder = :stale" + ("" if claim.handover else " AND lease_until < :now")
        stale = {":kind": claim.kind, ":stale": claim.stale_holder or "",
                 **({} if claim.handover else {":now": now})}
        writes: list[dict[str, Any]] = []
        if claim.stale_holder is not None:
            writes.append(tx_update(
                d, {"pair_key": claim.pair_key}, "SET holder = :h, lease_until = :l",
                takeover, {**hold, **stale}, {"#d": "decision"},
            ))
        elif claim.kind == "merging":
            item: dict[str, Any] = {
                "pair_key": claim.pair_key, "decision": "merging", "holder": claim.holder,
                "lease_until": claim.lease_until, "merge_id": claim.merge_id,
                "records": list(claim.records), "by": claim.by, "started_at": now,
            }
            if claim.link:
                item["link"] = claim.link.token_id
            writes.append(tx_put(d, item, "attribute_not_exists(pair_key)"))
        else:
            values = {**hold, ":undoing": "undoing", ":merged": "merged", ":m": claim.merge_id,
                      ":r": list(claim.records), ":by": claim.by, ":link": claim.link.token_id
                      if claim.link else None, ":now": now}
            writes.append(tx_update(
                d, {"pair_key": claim.pair_key},
                "SET #d = :undoing, holder = :h, lease_until = :l, records = :r, #by = :by, "
                "link = :link, started_at = :now",
                "#d = :merged AND merge_id = :m", values, {"#d": "decision", "#by": "by"},
            ))
        for record_id in claim.records:
            lock = {
                "merge_id": f"lock#{record_id}", "holder": claim.holder,
                "lease_until": claim.lease_until, "expires_at": claim.lease_until + 86_400,
                "pair_key": claim.pair_key,
            }
            orphan = claim.stale_locks.get(record_id) or claim.stale_holder
            if orphan is None:
                writes.append(tx_put(m, lock, "attribute_not_exists(merge_id)"))
            elif claim.handover:
                writes.append(tx_put(m, lock, "holder = :o", {":o": orphan}))
            else:
                writes.append(tx_put(
                    m, lock,
                    "attribute_not_exists(merge_id) OR (holder = :o AND lease_until < :now)",
                    {":o": orphan, ":now": now},
                ))
        if claim.takes_record:
            if claim.stale_holder is not None:
                writes.append(tx_update(
                    m, {"merge_id": claim.merge_id}, "SET holder = :h", "holder = :stale",
                    {":h": claim.holder, ":stale": claim.stale_holder},
                ))
            else:
                writes.append(tx_update(
                    m, {"merge_id": claim.merge_id}, "SET #s = :undoing, holder = :h",
                    "#s = :merged", {":h": claim.holder, ":undoing": "undoing", ":merged": "merged"},
                    {"#s": "state"},
                ))
        if claim.link:
            writes.append(self._link_put(claim.link, claim.holder, now))
        return self._lost(self._transact(writes), link_index=len(writes) - 1 if claim.link else None)

    def _link_put(self, link: LinkUse, holder: str, now: int) -> dict[str, Any]:
        item = {"merge_id": f"link#{link.token_id}", "expires_at": int(link.expires_at),
                "used_at": now, "holder": holder}
        return tx_put(self.merges.name, item, "attribute_not_exists(merge_id)")

    @staticmethod
    def _lost(result: TxResult, *, link_index: int | None) -> Lost | None:
        if result.won:
            return None
        if link_index is not None and result.failed(link_index):
            return "link_used"
        if result.failed(0) and not result.conflict:
            return "decided"
        return "busy"

    def reject(self, item: Mapping[str, Any], link: LinkUse | None, now: int) -> Lost | None:
        writes = [tx_put(self.decisions.name, _dynamo(dict(item)), "attribute_not_exists(pair_key)")]
        if link:
            writes.append(self._link_put(link, f"reject@{item['pair_key']}", now))
        return self._lost(self._transact(writes), link_index=1 if link else None)

    def put_merge(self, item: Mapping[str, Any]) -> bool:
        return put_if_absent(self.merges, dict(item), "merge_id").won

    def progress(
        self, merge_id: str, holder: str, step: str | None, fields: Mapping[str, Any]
    ) -> None:
        names: dict[str, str] = {}
        values: dict[str, Any] = {":h": holder}
        sets = []
        for index, (name, value) in enumerate(sorted(fields.items())):
            names[f"#f{index}"] = name
            values[f":f{index}"] = value
            sets.append(f"#f{index} = :f{index}")
        update = ("SET " + ", ".join(sets)) if sets else ""
        if step is not None:
            values[":step"] = {step}
            update += " ADD steps :step"
        kwargs: dict[str, Any] = {
            "Key": {"merge_id": merge_id},
            "UpdateExpression": update.strip(),
            "ConditionExpression": "holder = :h",
            "ExpressionAttributeValues": values,
        }
        if names:
            kwargs["ExpressionAttributeNames"] = names
        try:
            self.merges.update_item(**kwargs)
        except Exception as err:
            if condition_failed(err):
                raise ClaimLost(f"merge {merge_id} is no longer held by {holder}") from err
            raise

    def settle(self, settlement: Settlement) -> bool:
        s = settlement
        d, m = self.decisions.name, self.merges.name
        mine = {":h": s.holder}
        writes: list[dict[str, Any]] = []
        if s.merge_id and s.merge_to:
            names = {"#s": "state"}
            values: dict[str, Any] = {**mine, ":to": s.merge_to}
            sets = ["#s = :to"]
            for index, (name, value) in enumerate(sorted(s.merge_fields.items())):
                names[f"#f{index}"] = name
                values[f":f{index}"] = value
                sets.append(f"#f{index} = :f{index}")
            options = []
            for index, state in enumerate(s.merge_from):
                values[f":from{index}"] = state
                options.append(f":from{index}")
            writes.append(tx_update(
                m, {"merge_id": s.merge_id}, "SET " + ", ".join(sets) + " REMOVE holder",
                f"holder = :h AND #s IN ({', '.join(options)})", values, names,
            ))
        if s.decision is not None:
            writes.append(tx_put(d, _dynamo(dict(s.decision)), "holder = :h", mine))
        else:
            writes.append(tx_delete(d, {"pair_key": s.pair_key}, "holder = :h", mine))
        for record_id in s.records:
            writes.append(tx_delete(m, {"merge_id": f"lock#{record_id}"}, "holder = :h", mine))
        if s.release_link:
            writes.append(tx_delete(m, {"merge_id": f"link#{s.release_link}"}))
        return self._transact(writes).won


class S3Bundles:
    """Undo bundles as JSON objects under ``undo/`` in the versioned undo bucket."""

    def __init__(self, bucket: str) -> None:
        self.bucket = bucket

    def put(self, key: str, body: bytes) -> None:
        client("s3").put_object(
            Bucket=self.bucket, Key=key, Body=body, ContentType="application/json"
        )

    def get(self, key: str) -> bytes:
        answer = client("s3").get_object(Bucket=self.bucket, Key=key)
        data: bytes = answer["Body"].read()
        return data


# Queues ----------------------------------------------------------------------------------


class QueueSender:
    """SendMessage(Batch) to one queue, batches within SQS's 256 KiB and ten entries."""

    def __init__(self, queue_url: str) -> None:
        self.url = queue_url

    def send_all(self, bodies: Iterable[str]) -> int:
        sent = 0
        batch: list[str] = []
        size = 0
        for body in bodies:
            length = len(body.encode("utf-8"))
            if batch and (len(batch) == 10 or size + length > SQS_BATCH_BYTES):
                sent += self._send(batch)
                batch, size = [], 0
            batch.append(body)
            size += length
        if batch:
            sent += self._send(batch)
        return sent

    def _send(self, batch: list[str]) -> int:
        answer = client("sqs").send_message_batch(
            QueueUrl=self.url,
            Entries=[{"Id": str(i), "MessageBody": body} for i, body in enumerate(batch)],
        )
        failed = answer.get("Failed") or []
        if failed:
            raise RuntimeError(f"SQS refused {len(failed)} of {len(batch)} messages: {failed[0]}")
        return len(batch)

    def send(self, message: Mapping[str, Any]) -> None:
        client("sqs").send_message(QueueUrl=self.url, MessageBody=json.dumps(message, sort_keys=True))


def tables(*names: str) -> list[Table]:
    return [table(name) for name in names]


def epoch(now: dt.datetime, days: int = 0) -> int:
    return int((now + dt.timedelta(days=days)).timestamp())
