"""rrs-sync: mirror the customer sheet into rrs-customers (scheduled, every 15 minutes)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from handlers.common.observability import get_logger, logged
from handlers.review_requests import settings, timing
from handlers.review_requests.sheet import SheetSource, parse_rows, source_for
from handlers.review_requests.store import Customers
from handlers.review_requests.timing import iso

MAX_PROBLEMS_LOGGED = 20


def run_sync(
    source: SheetSource, customers: Customers, phone_region: str, now: dt.datetime
) -> dict[str, int]:
    """Upsert every usable row; unchanged rows cost one conditional write that fails."""
    rows, problems = parse_rows(source.fetch(), phone_region)
    changed = 0
    for row in rows:
        if customers.upsert(row.customer_id, row.fields, row.row_hash, iso(now)):
            changed += 1
    if problems:
        get_logger().warning(
            "sheet rows with problems",
            extra={"count": len(problems), "first": problems[:MAX_PROBLEMS_LOGGED]},
        )
    return {"rows": len(rows), "changed": changed, "problems": len(problems)}


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """One sync pass; nothing to do when no sheet is configured."""
    source = source_for(settings.text("RRS_SHEET_SOURCE", ""))
    if source is None:
        get_logger().info("no sheet configured")
        return {"rows": 0, "changed": 0, "problems": 0}
    result = run_sync(
        source,
        Customers(settings.text("RRS_CUSTOMERS_TABLE")),
        settings.phone_region(),
        timing.utcnow(),
    )
    get_logger().info("sheet synced", extra=result)
    return result
