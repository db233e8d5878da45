"""rrs-sweep: the scheduled safety net; acts only inside opening hours (checked here)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from handlers.common.observability import get_logger, logged
from handlers.review_requests import settings, timing
from handlers.review_requests.domain import ESCALATE, SEND
from handlers.review_requests.store import Requests
from handlers.review_requests.stragglers import Sweep, SweepConfig
from handlers.review_requests.work import KindRoutedQueue, SqsWorkQueue


def build_sweep() -> Sweep:
    return Sweep(
        requests=Requests(
            settings.text("RRS_REQUESTS_TABLE"), settings.text("RRS_REQUESTS_INDEX", "state-due")
        ),
        work=KindRoutedQueue(
            {
                SEND: SqsWorkQueue(settings.text("RRS_WORK_QUEUE_URL")),
                ESCALATE: SqsWorkQueue(settings.text("RRS_ESCALATIONS_QUEUE_URL")),
            }
        ),
        config=SweepConfig(
            window=settings.window(),
            business_timezone=settings.business_timezone(),
            grace=dt.timedelta(minutes=settings.number("RRS_SWEEP_GRACE_MINUTES", 30)),
            max_attempts=settings.number("RRS_SWEEP_MAX_ATTEMPTS", 3),
        ),
    )


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = build_sweep().run(timing.utcnow())
    get_logger().info("sweep done", extra=result)
    return dict(result)
