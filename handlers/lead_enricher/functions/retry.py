"""ler-retry (every 15 minutes): re-drive the dead letters, retry pending enrichments, alert."""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.lead_enricher.contract import RetrySettings
from handlers.lead_enricher.redrive import Invoker, LambdaInvoker, RetryJob

_job: RetryJob | None = None


def make_invoker() -> Invoker:
    """ler-intake's asynchronous invoke (tests record the calls instead)."""
    return LambdaInvoker()


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    global _job
    _job = _job or RetryJob(settings.current(RetrySettings), invoker=make_invoker())
    report = _job.run(context.get_remaining_time_in_millis)
    return {
        "redriven": report.redriven,
        "dropped": report.dropped,
        "parked": len(report.parked),
        "pending_retried": report.pending_retried,
        "backlog": report.backlog,
        "alerted": report.alerted,
    }
