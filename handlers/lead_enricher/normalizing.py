"""Normalising a lead (ler-normalize): deterministic cleanup, the model for ambiguous fields.

The rules run first (``cleanup``); the model is asked only when a field is ambiguous, and its
answer is bounded by the same rules (``normalize_model``). The normalised record is written to
ler-records under ``normalized/`` and the lead goes on as ``le.normalized``.
"""

from __future__ import annotations

import json
from typing import Any

from handlers.common import formats
from handlers.common.batch import Unusable
from handlers.common.observability import get_logger
from handlers.lead_enricher.cleanup import clean
from handlers.lead_enricher.contract import (
    EVENT_BUS,
    LEAD_MESSAGE_VERSION,
    NORMALIZED,
    NORMALIZED_PREFIX,
    NormalizeSettings,
)
from handlers.lead_enricher.events import EventBridgeSink, EventSink
from handlers.lead_enricher.forgotten_leads import ForgottenLeads
from handlers.lead_enricher.lead import Lead
from handlers.lead_enricher.normalize_model import resolve
from handlers.lead_enricher.storage import ObjectStore


def normalize_lead(lead: Lead, *, default_region: str, model_id: str, client: Any = None) -> Lead:
    """The lead with its ``contact`` filled and a ``normalize`` note of what happened."""
    cleanup = clean(lead.fields, default_region=default_region)
    note: dict[str, Any] = {
        "flags": list(cleanup.flags),
        "ambiguous": sorted(cleanup.ambiguous),
        "model": None,
    }
    if cleanup.ambiguous:
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
        config: NormalizeSettings,
        store: ObjectStore | None = None,
        sink: EventSink | None = None,
        model_client: Any = None,
        forgotten: ForgottenLeads | None = None,
    ) -> None:
        self.config = config
        self.store = store or ObjectStore()
        self.sink = sink or EventBridgeSink(config.event_source, EVENT_BUS)
        self.model_client = model_client
        self.forgotten = forgotten or ForgottenLeads.of(config.identity_table, config.forget_salt_secret_id)

    def process(self, body: str) -> Lead | None:
        """The normalised lead, or None when it is an erased person's from before the erasure."""
        try:
            data = json.loads(body)
            formats.read(data, current=LEAD_MESSAGE_VERSION, what="lead message")
            lead = Lead.from_json(data)
        except (ValueError, TypeError) as err:
            # Refused into the DLQ, never dropped: an older release's lead is re-driven after a fix.
            raise Unusable(f"unreadable lead message: {err}") from err
        normalize_lead(
            lead,
            default_region=self.config.default_phone_region,
            model_id=self.config.normalize_model_id,
            client=self.model_client,
        )
        if self.forgotten.drop(lead, "normalize"):
            return None
        key = f"{NORMALIZED_PREFIX}{lead.lead_id}.json"
        self.store.put_json(self.config.records_bucket, key, lead.to_json())
        self.sink.publish(NORMALIZED, lead)
        return lead
