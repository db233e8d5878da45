"""ler-normalize: ler-intake-queue (batch size 1) -> deterministic cleanup -> le.normalized.

A failed message is reported and retried, an unreadable one refused into the DLQ
(``handlers.common.batch``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.degradations import model_client
from handlers.lead_enricher.contract import NORMALIZE_FUNCTION, NormalizeSettings
from handlers.lead_enricher.enrich_cache import degradation_ledger
from handlers.lead_enricher.normalizing import Normalizer

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


def wire(config: NormalizeSettings, clock: Clock) -> Normalizer:
    """Each model call takes one of the day's ``dailyModelCalls`` first; a refused model is
    noted for the junk digest (``degradations.model_client``)."""
    ledger = degradation_ledger(config.cache_table)
    return Normalizer(config, model_client=model_client(
        None, ledger, NORMALIZE_FUNCTION, clock, config.daily_model_calls
    ))


def run(normalizer: Normalizer, record: SQSRecord, context: Any, clock: Clock) -> Any:
    return normalizer.process(record.body)


handler = entry.handler(__name__, NormalizeSettings, wire, run, batch="sqs")
