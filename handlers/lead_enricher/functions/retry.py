"""ler-retry (every 15 minutes): re-drive the dead letters, retry pending enrichments, alert."""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.lead_enricher.contract import RetrySettings
from handlers.lead_enricher.redrive import Invoker, LambdaInvoker, RetryJob


def wire(config: RetrySettings, clock: Clock, *, invoker: Invoker | None = None) -> RetryJob:
    """``invoker``: ler-intake's asynchronous invoke, unless tests record the calls."""
    return RetryJob(config, invoker=invoker or LambdaInvoker(), clock=clock)


def run(job: RetryJob, event: dict[str, Any], context: Any, clock: Clock) -> dict[str, Any]:
    report = job.run(context.get_remaining_time_in_millis)
    return {
        "redriven": report.redriven,
        "dropped": report.dropped,
        "parked": len(report.parked),
        "pending_retried": report.pending_retried,
        "backlog": report.backlog,
        "alerted": report.alerted,
    }


handler = entry.handler(__name__, RetrySettings, wire, run)
