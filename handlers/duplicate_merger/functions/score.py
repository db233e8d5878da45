"""dm-score: the ``dm-blocks`` consumer; each block message is scored on its own.

A malformed message, or one of a format not read here (``pipeline.KEY_KINDS_OF_VERSION``), is
refused (``batch.Unusable``): never acknowledged, it ends in dm-blocks' DLQ; any other failure
fails that message only and SQS redelivers it (every write of ``scoring.process`` is idempotent
for a redelivery). The run's calibrated bands live in the wired service: one read of the
counters per run and container.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from handlers.common import aws_clients, batch, entry
from handlers.common.clock import Clock
from handlers.common.observability import get_logger
from handlers.duplicate_merger import contract, scoring
from handlers.duplicate_merger.matcher import ClassCalibration, RunBands, Thresholds
from handlers.duplicate_merger.pipeline import MessageError
from handlers.duplicate_merger.store import DecisionTally, PairStore, QueueSender

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


@dataclass(frozen=True)
class Scoring:
    config: contract.ScoreSettings
    pairs: PairStore
    merges: QueueSender
    thresholds: Thresholds
    bands: RunBands


def wire(config: contract.ScoreSettings, clock: Clock) -> Scoring:
    pairs = PairStore(aws_clients.table(config.pairs_table), aws_clients.table(config.decisions_table))

    def note(run_id: str, calibration: ClassCalibration) -> None:
        ttl = int((clock() + dt.timedelta(days=config.pair_ttl_days)).timestamp())
        pairs.note_calibration(run_id, calibration.summary(), ttl=ttl)

    return Scoring(
        config,
        pairs,
        QueueSender(config.merges_queue_url),
        Thresholds(automatic=config.automatic_threshold, propose=config.propose_threshold),
        RunBands(DecisionTally(pairs.decisions).counts, on_calibrated=note),
    )


def run(service: Scoring, record: SQSRecord, context: object, clock: Clock) -> None:
    """Score one block message."""
    s = service.config
    try:
        counts = scoring.process(
            record.body,
            service.pairs,
            service.merges,
            thresholds=service.thresholds,
            floor=s.record_floor,
            now=clock(),
            pair_ttl_days=s.pair_ttl_days,
            calibrate=service.bands,
        )
    except MessageError as err:
        raise batch.Unusable(f"malformed block message: {err}") from err
    get_logger().info("block message scored", extra={"message_id": record.message_id, **counts})


handler = entry.handler(__name__, contract.ScoreSettings, wire, run, batch="sqs")
