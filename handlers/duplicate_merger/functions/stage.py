"""dm-stage: the ``dm-stages`` consumer; one partition of one stage of the split weekly run.

``fanout.process`` does the work; this module wires it to the dm-shards bucket, the read's
checkpoints in the pairs table, the two queues and the stage counters. A message that is not a
stage message is refused (``batch.Unusable``: to dm-stages' DLQ); any other failure fails that
message only and SQS redelivers it (a stage rewrites its own objects; the counter counts a
partition once).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from handlers.common import aws_clients, entry
from handlers.common.clock import Clock
from handlers.common.observability import get_logger
from handlers.duplicate_merger import contract, fanout, reading
from handlers.duplicate_merger.crm import Contact
from handlers.duplicate_merger.shards import S3Shards
from handlers.duplicate_merger.store import PairStore, QueueSender

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


@dataclass(frozen=True)
class Staging:
    config: contract.StageSettings
    stages: fanout.Stages


def wire(config: contract.StageSettings, clock: Clock) -> Staging:
    pairs = aws_clients.table(config.pairs_table)
    checkpoints = reading.DynamoCheckpoints(pairs, ttl=0)  # read only here: no TTL is written

    def chunk(run_id: str, n: int) -> list[Contact]:
        return reading.decode_chunk(checkpoints.chunk(run_id, n))

    return Staging(
        config,
        fanout.Stages(
            S3Shards(aws_clients.client("s3"), config.shards_bucket, contract.SHARDS_PREFIX),
            chunk,
            QueueSender(config.stages_queue_url),
            QueueSender(config.blocks_queue_url),
            fanout.StageCounter(pairs),
            PairStore(pairs, pairs),
        ),
    )


def run(service: Staging, record: SQSRecord, context: object, clock: Clock) -> None:
    """Run one stage message."""
    message = fanout.StageMessage.parse(record.body)
    ttl = int((clock() + dt.timedelta(days=service.config.pair_ttl_days)).timestamp())
    outcome = fanout.process(service.stages, message, ttl=ttl)
    get_logger().info("split stage done", extra={"message_id": record.message_id, **outcome})


handler = entry.handler(__name__, contract.StageSettings, wire, run, batch="sqs")
