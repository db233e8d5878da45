"""rrs-sync: mirror the customer sheet into rrs-customers (scheduled, every 15 minutes)."""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.observability import get_logger, logged
from handlers.review_requests import contract, timing
from handlers.review_requests.sheet import mirror, source_for
from handlers.review_requests.store import Customers


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """One sync pass; nothing to do when no sheet is configured."""
    s = settings.current(contract.SyncSettings)
    source = source_for(s.sheet_source)
    if source is None:
        get_logger().info("no sheet configured")
        return {"rows": 0, "changed": 0, "problems": 0}
    result = mirror(source, Customers(s.customers_table), s.phone_region, timing.utcnow())
    get_logger().info("sheet synced", extra=result)
    return result
