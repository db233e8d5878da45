"""upsr-picker: the upsr-jobs consumer, one offer per suggest job (logic in ``suggesting``).

Each message is picked on its own through ``handlers.common.batch``: a failing job (a throttled
model, a malformed body) is a reported item failure, so SQS redelivers it and, after the
queue's receives, moves it to upsr-jobs-dlq.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.degradations import model_client
from handlers.upsell_recommender import contract, suggesting


def wire(config: contract.PickerSettings, clock: Clock, **collaborators: Any) -> suggesting.PickerDeps:
    """The real dependencies; ``collaborators`` are the stand-ins tests and the sandbox give.
    Each model call takes one of the day's ``dailyModelCalls`` first; a refused model is noted
    for the owner's roll-up (``degradations.model_client``)."""
    deps = suggesting.PickerDeps.from_settings(config, **collaborators)
    guarded = model_client(deps.model_client, deps.ledger, contract.PICKER, clock, config.daily_model_calls)
    return replace(deps, model_client=guarded)


def run(deps: suggesting.PickerDeps, record: Any, context: Any, clock: Clock) -> Any:
    return suggesting.process_record(record.raw_event, deps, now=clock().timestamp())


handler = entry.handler(__name__, contract.PickerSettings, wire, run, batch="sqs")
