"""ler-normalize: ler-intake-queue (batch size 1) -> deterministic cleanup -> le.normalized.

A failed message is reported and retried, an unreadable one dropped (``handlers.common.batch``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.lead_enricher.contract import NormalizeSettings
from handlers.lead_enricher.normalizing import Normalizer

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


def wire(config: NormalizeSettings, clock: Clock) -> Normalizer:
    return Normalizer(config)


def run(normalizer: Normalizer, record: SQSRecord, context: Any, clock: Clock) -> Any:
    return normalizer.process(record.body)


handler = entry.handler(__name__, NormalizeSettings, wire, run, batch="sqs")
