"""dm-score: the ``dm-blocks`` consumer; each block message is scored on its own.

A malformed message is dropped (``batch.Unusable``: retrying cannot fix it); any other failure
fails that message only and SQS redelivers it (every write of ``scoring.process`` is idempotent
for a redelivery).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from handlers.common import batch, settings
from handlers.common.observability import logged
from handlers.duplicate_merger import contract, scoring
from handlers.duplicate_merger.calibration import ClassCalibration, RunBands

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


_RUN_BANDS: RunBands | None = None
"""The run's calibrated bands, kept across invocations: one read of the counters per run."""


@logged
def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """SQS entry point; reports partial batch failures."""
    from handlers.common.aws_clients import table
    from handlers.common.observability import get_logger
    from handlers.duplicate_merger.evidence import Thresholds
    from handlers.duplicate_merger.pipeline import MessageError
    from handlers.duplicate_merger.store import PairStore, QueueSender

    s = settings.current(contract.ScoreSettings)
    logger = get_logger()
    pairs = PairStore(table(s.pairs_table), table(s.decisions_table))
    global _RUN_BANDS
    if _RUN_BANDS is None:
        from handlers.duplicate_merger.store import DecisionTally

        def note(run_id: str, calibration: ClassCalibration) -> None:
            ttl = int((dt.datetime.now(dt.UTC) + dt.timedelta(days=s.pair_ttl_days)).timestamp())
            pairs.note_calibration(run_id, calibration.summary(), ttl=ttl)

        _RUN_BANDS = RunBands(DecisionTally(pairs.decisions).counts, on_calibrated=note)
    bands = _RUN_BANDS
    merges = QueueSender(s.merges_queue_url)
    thresholds = Thresholds(automatic=s.automatic_threshold, propose=s.propose_threshold)

    def one(record: SQSRecord) -> None:
        try:
            counts = scoring.process(
                record.body,
                pairs,
                merges,
                thresholds=thresholds,
                floor=s.record_floor,
                now=dt.datetime.now(dt.UTC),
                pair_ttl_days=s.pair_ttl_days,
                calibrate=bands,
            )
        except MessageError as err:
            raise batch.Unusable(f"malformed block message: {err}") from err
        logger.info("block message scored", extra={"message_id": record.message_id, **counts})

    return batch.sqs_batch(dict(event), context, one)
