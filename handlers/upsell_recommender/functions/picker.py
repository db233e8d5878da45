"""upsr-picker: the upsr-jobs consumer, one offer per suggest job (logic in ``suggesting``).

Each message is picked on its own through ``handlers.common.batch``: a failing job (a throttled
model, a malformed body) is a reported item failure, so SQS redelivers it and, after the
queue's receives, moves it to upsr-jobs-dlq.
"""

from __future__ import annotations

from typing import Any

from handlers.common import batch, settings
from handlers.common.observability import logged
from handlers.upsell_recommender import clock, contract, suggesting

_deps: suggesting.PickerDeps | None = None


def current_deps() -> suggesting.PickerDeps:
    """This container's dependencies, built on first use."""
    global _deps
    if _deps is None:
        _deps = suggesting.PickerDeps.from_settings(settings.current(contract.PickerSettings))
    return _deps


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """SQS entry point; failed records are reported individually (partial batch response)."""
    deps = current_deps()
    return batch.sqs_batch(
        event,
        context,
        lambda record: suggesting.process_record(record.raw_event, deps, now=clock.now()),
    )
