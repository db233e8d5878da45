"""upsr-catalogue access: the sync's guarded writes and the picker's two ways of reading.

The picker reads the whole (small) catalogue with a Scan to build the model's candidate list,
and keeps that snapshot for a few minutes in a warm container; then it re-reads the few rows the
model shortlisted (BatchGetItem) so the filters judge current stock and price.

The sync writes a row only when its content changed (``content_hash``) and ends each complete
run by stamping one marker item, :data:`MARKER_SKU`. A row the store still lists is as fresh
as the last complete sync, so its freshness is the later of its own ``synced_at`` and the
marker's; a row the store stopped listing is written once, unavailable.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from handlers.common.entry import registry
from handlers.common.transitions import condition_failed
from handlers.upsell_recommender.domain import CatalogueItem

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

SNAPSHOT_TTL_S = 300.0
"""Candidate lists may be five minutes old: the shortlist is re-read before any offer."""

MARKER_SKU = "#last-complete-sync"
"""The item stamped at the end of every complete sync (no variant id: never a product row)."""
DELISTED = "delisted"
"""The content hash of a row the store no longer lists."""

_lock = threading.Lock()
_snapshots: dict[str, tuple[float, tuple[CatalogueItem, ...]]] = {}


def content_hash(row: CatalogueItem) -> str:
    """What a row says, without when it was written: equal hashes, nothing to write."""
    item = row.to_item()
    item.pop("synced_at", None)
    text = json.dumps(item, sort_keys=True, default=lambda v: sorted(v) if isinstance(v, set) else str(v))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def stored_hashes(table: Table) -> dict[str, str]:
    """Every row's content hash (one paged Scan; the marker left out)."""
    found: dict[str, str] = {}
    request: dict[str, Any] = {"ProjectionExpression": "sku, content_hash"}
    while True:
        page = table.scan(**request)
        for item in page.get("Items", []):
            sku = item.get("sku")
            if isinstance(sku, str) and sku != MARKER_SKU:
                found[sku] = str(item.get("content_hash", ""))
        last = page.get("LastEvaluatedKey")
        if not last:
            return found
        request["ExclusiveStartKey"] = last


def upsert(table: Table, row: CatalogueItem) -> bool:
    """Write ``row`` unless a newer sync already wrote this SKU; True when written.

    Two overlapping syncs (a slow one and the next one) cannot put older stock back over newer.
    """
    try:
        table.put_item(
            Item={**row.to_item(), "content_hash": content_hash(row)},
            ConditionExpression="attribute_not_exists(sku) OR synced_at <= :at",
            ExpressionAttributeValues={":at": row.synced_at},
        )
    except ClientError as err:
        if not condition_failed(err):
            raise
        return False
    return True


def delist(table: Table, sku: str, now: int) -> bool:
    """Mark a row the store no longer lists unavailable (once); False if a newer sync wrote it."""
    try:
        table.update_item(
            Key={"sku": sku},
            UpdateExpression="SET available = :no, content_hash = :h, synced_at = :at",
            ConditionExpression="attribute_exists(sku) AND synced_at <= :at",
            ExpressionAttributeValues={":no": False, ":h": DELISTED, ":at": now},
        )
    except ClientError as err:
        if not condition_failed(err):
            raise
        return False
    return True


def mark_complete(table: Table, now: int) -> None:
    """Stamp the end of a complete sync: every listed row is current as of ``now``."""
    try:
        table.put_item(
            Item={"sku": MARKER_SKU, "synced_at": now},
            ConditionExpression="attribute_not_exists(sku) OR synced_at <= :at",
            ExpressionAttributeValues={":at": now},
        )
    except ClientError as err:
        if not condition_failed(err):
            raise  # a newer sync already stamped a later time: keep it


def _confirmed(rows: list[CatalogueItem], marker_at: int) -> tuple[CatalogueItem, ...]:
    """Rows still listed are as fresh as the last complete sync."""
    return tuple(
        dataclasses.replace(r, synced_at=max(r.synced_at, marker_at)) if r.available else r
        for r in rows
    )


def _marker_at(item: Any) -> int | None:
    if isinstance(item, dict) and item.get("sku") == MARKER_SKU:
        return int(item.get("synced_at", 0))
    return None


def scan_all(table: Table) -> tuple[CatalogueItem, ...]:
    """Every usable row of the catalogue."""
    rows: list[CatalogueItem] = []
    marker_at = 0
    request: dict[str, Any] = {}
    while True:
        page = table.scan(**request)
        for item in page.get("Items", []):
            if (at := _marker_at(item)) is not None:
                marker_at = at
            elif (row := CatalogueItem.from_item(item)) is not None:
                rows.append(row)
        last = page.get("LastEvaluatedKey")
        if not last:
            return _confirmed(rows, marker_at)
        request["ExclusiveStartKey"] = last


def snapshot(table: Table, now: float) -> tuple[CatalogueItem, ...]:
    """The catalogue, scanned at most once per ``SNAPSHOT_TTL_S`` per table in this process."""
    name = table.name
    with _lock:
        cached = _snapshots.get(name)
    if cached is not None and now - cached[0] < SNAPSHOT_TTL_S:
        return cached[1]
    rows = scan_all(table)
    with _lock:
        _snapshots[name] = (now, rows)
    return rows


def forget_snapshots() -> None:
    """Drop cached snapshots (a new container: ``entry.registry``)."""
    with _lock:
        _snapshots.clear()


registry.keeps(__name__, forget_snapshots.__name__)


def fetch(table: Table, skus: Iterable[str]) -> dict[str, CatalogueItem]:
    """The current rows of ``skus`` (BatchGetItem, consistent reads); unknown SKUs are absent.

    The table resource's client converts Python values both ways, like the resource itself.
    """
    wanted = sorted({s for s in skus if s} | {MARKER_SKU})
    found: dict[str, CatalogueItem] = {}
    marker_at = 0
    client = table.meta.client
    for start in range(0, len(wanted), 100):
        request: Any = {
            table.name: {
                "Keys": [{"sku": s} for s in wanted[start : start + 100]],
                "ConsistentRead": True,
            }
        }
        for attempt in range(8):
            if attempt:
                time.sleep(min(0.05 * 2**attempt, 1.0))  # unprocessed keys: back off a little
            answer = client.batch_get_item(RequestItems=request)
            for item in answer.get("Responses", {}).get(table.name, []):
                if (at := _marker_at(item)) is not None:
                    marker_at = at
                elif (row := CatalogueItem.from_item(item)) is not None:
                    found[row.sku] = row
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                break
        else:
            raise RuntimeError("BatchGetItem left keys unprocessed after 8 rounds")
    return {row.sku: row for row in _confirmed(list(found.values()), marker_at)}
