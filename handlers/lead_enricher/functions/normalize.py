"""ler-normalize: ler-intake-queue (batch size 1) -> deterministic cleanup -> le.normalized."""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.batch import sqs_batch
from handlers.common.observability import logged
from handlers.lead_enricher.contract import NormalizeSettings
from handlers.lead_enricher.normalizing import Normalizer

_normalizer: Normalizer | None = None


def _service() -> Normalizer:
    global _normalizer
    if _normalizer is None:
        _normalizer = Normalizer(settings.current(NormalizeSettings))
    return _normalizer


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """SQS batch (size 1): a failed message is reported and retried, an unreadable one dropped."""
    return sqs_batch(event, context, lambda record: _service().process(record.body))
