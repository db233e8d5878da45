"""upsr-catalogue access: the sync's guarded upsert and the picker's two ways of reading.

The picker reads the whole (small) catalogue with a Scan to build the model's candidate list,
and keeps that snapshot for a few minutes in a warm container; then it re-reads the few rows the
model shortlisted (BatchGetItem) so the filters judge current stock and price.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from handlers.common.transitions import condition_failed
from handlers.upsell_recommender.domain import CatalogueItem

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

SNAPSHOT_TTL_S = 300.0
"""Candidate lists may be five minutes old: the shortlist is re-read before any offer."""

_lock = threading.Lock()
_snapshots: dict[str, tuple[float, tuple[CatalogueItem, ...]]] = {}


def upsert(table: Table, row: CatalogueItem) -> bool:
    """Write ``row`` unless a newer sync already wrote this SKU; True when written.

    Two overlapping syncs (a slow one and the next one) cannot put older stock back over newer.
    """
    from botocore.exceptions import ClientError

    try:
        table.put_item(
            Item=row.to_item(),
            ConditionExpression="attribute_not_exists(sku) OR synced_at <= :at",
            ExpressionAttributeValues={":at": row.synced_at},
        )
    except ClientError as err:
        if not condition_failed(err):
            raise
        return False
    return True


def scan_all(table: Table) -> tuple[CatalogueItem, ...]:
    """Every usable row of the catalogue."""
    rows: list[CatalogueItem] = []
    request: dict[str, Any] = {}
    while True:
        page = table.scan(**request)
        for item in page.get("Items", []):
            row = CatalogueItem.from_item(item)
            if row is not None:
                rows.append(row)
        last = page.get("LastEvaluatedKey")
        if not last:
            return tuple(rows)
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
    """Drop cached snapshots (tests; a container never needs to)."""
    with _lock:
        _snapshots.clear()


def fetch(table: Table, skus: Iterable[str]) -> dict[str, CatalogueItem]:
    """The current rows of ``skus`` (BatchGetItem, consistent reads); unknown SKUs are absent.

    The table resource's client converts Python values both ways, like the resource itself.
    """
    wanted = sorted({s for s in skus if s})
    found: dict[str, CatalogueItem] = {}
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
                row = CatalogueItem.from_item(item)
                if row is not None:
                    found[row.sku] = row
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                break
        else:
            raise RuntimeError("BatchGetItem left keys unprocessed after 8 rounds")
    return found
