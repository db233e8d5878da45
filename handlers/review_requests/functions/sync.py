"""rrs-sync: mirror the customer sheet into rrs-customers (scheduled, every 15 minutes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.observability import get_logger
from handlers.review_requests import contract
from handlers.review_requests.sheet import SheetSource, mirror, source_for
from handlers.review_requests.store import Customers


@dataclass(frozen=True)
class Sync:
    source: SheetSource | None
    customers: Customers
    phone_region: str


def wire(s: contract.SyncSettings, clock: Clock, *, source: SheetSource | None = None) -> Sync:
    """``source``: the sheet the settings name, unless tests or the sandbox give another."""
    return Sync(source or source_for(s.sheet_source), Customers(s.customers_table, s.customer_days), s.phone_region)


def run(sync: Sync, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, Any]:
    """One sync pass; nothing to do when no sheet is configured."""
    if sync.source is None:
        get_logger().info("no sheet configured")
        return {"rows": 0, "changed": 0, "problems": 0}
    result = mirror(sync.source, sync.customers, sync.phone_region, clock())
    get_logger().info("sheet synced", extra=result)
    return result


handler = entry.handler(__name__, contract.SyncSettings, wire, run)
