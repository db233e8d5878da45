"""AWS adapters: the pairs, decisions and merges tables, the undo bucket, the two queues.

Every write that must happen at most once is a conditional write: a decision is put only where
none exists; a lock only where none is held (or its lease ran out); a pair row only by a run at
least as new as the one that wrote it; a merge's state moves only from the state expected.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from handlers.common.aws_clients import client, table
from handlers.common.transitions import put_if_absent, transition
from handlers.duplicate_merger.pipeline import CandidatePair

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

SQS_BATCH_BYTES = 250_000
RUN_LATEST = "run#latest"


def _is_condition_failure(err: Exception) -> bool:
    response = getattr(err, "response", None) or {}
    return bool(response.get("Error", {}).get("Code") == "ConditionalCheckFailedException")


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
            if _is_condition_failure(err):
                return None
            raise
        return dict(answer.get("Attributes") or {})

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


# Decisions, merges, locks, links (dm-merge) ----------------------------------------------


class DynamoLedger:
    """``merging.Ledger`` on the decisions and merges tables."""

    def __init__(self, merges: Table, decisions: Table) -> None:
        self.merges = merges
        self.decisions = decisions

    def decision(self, pair_key: str) -> Mapping[str, Any] | None:
        item = self.decisions.get_item(Key={"pair_key": pair_key}).get("Item")
        return None if item is None else _plain(dict(item))

    def put_decision(self, item: Mapping[str, Any], *, over_merged: bool = False) -> bool:
        if not over_merged:
            return put_if_absent(self.decisions, dict(item), "pair_key").won
        try:
            self.decisions.put_item(
                Item=dict(item),
                ConditionExpression="decision = :merged",
                ExpressionAttributeValues={":merged": "merged"},
            )
        except Exception as err:
            if _is_condition_failure(err):
                return False
            raise
        return True

    def acquire(
        self, record_id: str, holder: str, now: int, lease_s: int
    ) -> tuple[bool, Mapping[str, Any] | None]:
        try:
            answer = self.merges.put_item(
                Item={
                    "merge_id": f"lock#{record_id}",
                    "holder": holder,
                    "lease_until": now + lease_s,
                    "expires_at": now + lease_s + 86_400,
                },
                ConditionExpression=(
                    "attribute_not_exists(merge_id) OR lease_until < :now OR holder = :holder"
                ),
                ExpressionAttributeValues={":now": now, ":holder": holder},
                ReturnValues="ALL_OLD",
            )
        except Exception as err:
            if _is_condition_failure(err):
                return False, None
            raise
        previous = answer.get("Attributes")
        return True, None if not previous else _plain(dict(previous))

    def release(self, record_id: str, holder: str) -> None:
        try:
            self.merges.delete_item(
                Key={"merge_id": f"lock#{record_id}"},
                ConditionExpression="holder = :holder",
                ExpressionAttributeValues={":holder": holder},
            )
        except Exception as err:
            if not _is_condition_failure(err):
                raise

    def put_merge(self, item: Mapping[str, Any]) -> bool:
        return put_if_absent(self.merges, dict(item), "merge_id").won

    def move_merge(
        self, merge_id: str, expected: str, new: str, fields: Mapping[str, Any]
    ) -> bool:
        return transition(
            self.merges, {"merge_id": merge_id}, "state", expected, new, dict(fields)
        ).won

    def merge(self, merge_id: str) -> Mapping[str, Any] | None:
        item = self.merges.get_item(Key={"merge_id": merge_id}).get("Item")
        return None if item is None else _plain(dict(item))

    def release_link(self, token_id: str) -> None:
        """Make a consumed link usable again (its action failed and was put back)."""
        self.merges.delete_item(Key={"merge_id": f"link#{token_id}"})


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
