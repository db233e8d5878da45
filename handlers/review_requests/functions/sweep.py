"""rrs-sweep: the scheduled safety net; acts only inside opening hours (checked in stragglers)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.observability import get_logger
from handlers.review_requests import contract
from handlers.review_requests.store import Requests, degradation_ledger
from handlers.review_requests.stragglers import Sweep, SweepConfig
from handlers.review_requests.timing import Window
from handlers.review_requests.work import KindRoutedQueue, SqsWorkQueue


def wire(s: contract.SweepSettings, clock: Clock) -> Sweep:
    """The sweep wired to the stragglers index, both queues the settings name, and rrs's
    degradation notes (it asks for the owner's daily notice)."""
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
        ledger=degradation_ledger(s.requests_table),
    )


def run(sweep: Sweep, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, Any]:
    result = sweep.run(clock())
    get_logger().info("sweep done", extra=result)
    return dict(result)


handler = entry.handler(__name__, contract.SweepSettings, wire, run)
