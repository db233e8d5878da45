"""rrs-sweep: the scheduled safety net; acts only inside opening hours (checked in stragglers)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from handlers.common import settings
from handlers.common.observability import get_logger, logged
from handlers.review_requests import contract, timing
from handlers.review_requests.store import Requests
from handlers.review_requests.stragglers import Sweep, SweepConfig
from handlers.review_requests.timing import Window
from handlers.review_requests.work import KindRoutedQueue, SqsWorkQueue


def build(s: contract.SweepSettings) -> Sweep:
    """The sweep wired to the stragglers index and both queues the settings name."""
    return Sweep(
        requests=Requests(s.requests_table, s.requests_index),
        work=KindRoutedQueue(
            {
                contract.SEND: SqsWorkQueue(s.work_queue_url),
                contract.ESCALATE: SqsWorkQueue(s.escalations_queue_url),
            }
        ),
        config=SweepConfig(
            window=Window(s.opening_start, s.opening_end),
            business_timezone=s.opening_timezone,
            grace=dt.timedelta(minutes=s.sweep_grace_minutes),
            max_attempts=s.sweep_max_attempts,
        ),
    )


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = build(settings.current(contract.SweepSettings)).run(timing.utcnow())
    get_logger().info("sweep done", extra=result)
    return dict(result)
