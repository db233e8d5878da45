"""ler-normalize: ler-intake-queue (batch size 1) -> deterministic cleanup -> le.normalized.

The rules run first (``cleanup``); the model is asked only when a field is ambiguous, and its
answer is bounded by the same rules (``normalize_model``). The normalised record is written to
ler-records under ``normalized/`` and the lead goes on as ``le.normalized``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from handlers.common.observability import get_logger, logged
from handlers.lead_enricher.cleanup import clean
from handlers.lead_enricher.contract import NORMALIZED, NORMALIZED_PREFIX
from handlers.lead_enricher.events import EventBridgeSink, EventSink
from handlers.lead_enricher.lead import Lead
from handlers.lead_enricher.storage import ObjectStore


@dataclass(frozen=True)
class NormalizeConfig:
    records_bucket: str
    model_id: str
    default_region: str

    @classmethod
    def from_env(cls) -> NormalizeConfig:
        return cls(
            records_bucket=os.environ["RECORDS_BUCKET"],
            model_id=os.environ["NORMALIZE_MODEL_ID"],
            default_region=os.environ.get("DEFAULT_PHONE_REGION", "GB"),
        )


def normalize_lead(lead: Lead, *, default_region: str, model_id: str, client: Any = None) -> Lead:
    """The lead with its ``contact`` filled and a ``normalize`` note of what happened."""
    cleanup = clean(lead.fields, default_region=default_region)
    note: dict[str, Any] = {
        "flags": list(cleanup.flags),
        "ambiguous": sorted(cleanup.ambiguous),
        "model": None,
    }
    if cleanup.ambiguous:
        from handlers.lead_enricher.normalize_model import resolve

        resolution, outcome = resolve(cleanup, model_id=model_id, client=client)
        note["model"] = outcome
        note["accepted"] = resolution.accepted
        note["discarded"] = resolution.discarded
        for name in sorted(set(cleanup.ambiguous) - set(resolution.accepted)):
            note["flags"].append(f"{name}_unresolved")
        if resolution.discarded:
            get_logger().info(
                "model answer discarded", lead_id=lead.lead_id, discarded=resolution.discarded
            )
    lead.contact = cleanup.contact
    lead.normalize = note
    return lead


class Normalizer:
    """One queued lead in, one normalised record and one event out."""

    def __init__(
        self,
        config: NormalizeConfig,
        store: ObjectStore | None = None,
        sink: EventSink | None = None,
        model_client: Any = None,
    ) -> None:
        self.config = config
        self.store = store or ObjectStore()
        self.sink = sink or EventBridgeSink.from_env()
        self.model_client = model_client

    def process(self, body: str) -> Lead | None:
        try:
            lead = Lead.from_json(json.loads(body))
        except (ValueError, TypeError) as err:
            # A message that can never parse would only cycle through the DLQ: log and drop.
            get_logger().error("unreadable lead message dropped", error=str(err))
            return None
        normalize_lead(
            lead,
            default_region=self.config.default_region,
            model_id=self.config.model_id,
            client=self.model_client,
        )
        key = f"{NORMALIZED_PREFIX}{lead.lead_id}.json"
        self.store.put_json(self.config.records_bucket, key, lead.to_json())
        self.sink.publish(NORMALIZED, lead)
        return lead


_normalizer: Normalizer | None = None


def _service() -> Normalizer:
    global _normalizer
    if _normalizer is None:
        _normalizer = Normalizer(NormalizeConfig.from_env())
    return _normalizer


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """SQS batch (size 1); failures are reported per message, the rest are not retried."""
    from aws_lambda_powertools.utilities.batch import (
        BatchProcessor,
        EventType,
        process_partial_response,
    )
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    def record_handler(record: SQSRecord) -> None:
        _service().process(record.body)

    processor = BatchProcessor(event_type=EventType.SQS)
    return dict(
        process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )
    )
