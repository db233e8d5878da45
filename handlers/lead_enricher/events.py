"""The chain's transport: EventBridge events on the chain's bus carrying the whole lead.

Stages publish through ``EventSink`` (the real one calls PutEvents; tests may use the real one
against moto or any object with ``publish``). A failed entry raises, so the invocation fails
and the lead is retried or lands in ler-dlq instead of silently vanishing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from handlers.common.aws_clients import client
from handlers.lead_enricher.contract import EVENT_BUS
from handlers.lead_enricher.lead import Lead


class PublishError(RuntimeError):
    """EventBridge refused an entry."""


class EventSink(Protocol):
    """Where a stage sends the lead on."""

    def publish(self, detail_type: str, lead: Lead) -> None:
        """Emit ``lead`` as one event of ``detail_type``."""
        ...


class EventBridgeSink:
    """PutEvents on one bus with this stack's source."""

    def __init__(self, source: str, bus: str = EVENT_BUS, client: Any = None) -> None:
        self.source = source
        self.bus = bus
        self._client = client

    def publish(self, detail_type: str, lead: Lead) -> None:
        self.publish_raw(detail_type, lead.to_json())

    def publish_raw(self, detail_type: str, detail: Mapping[str, Any]) -> None:
        """Emit any detail (the retry job re-drives events it cannot parse as leads)."""
        if self._client is None:
            self._client = client("events")
        answer = self._client.put_events(
            Entries=[
                {
                    "Source": self.source,
                    "DetailType": detail_type,
                    "Detail": json.dumps(detail, separators=(",", ":"), default=str),
                    "EventBusName": self.bus,
                }
            ]
        )
        if answer.get("FailedEntryCount"):
            entry = (answer.get("Entries") or [{}])[0]
            raise PublishError(
                f"{detail_type}: {entry.get('ErrorCode')} {entry.get('ErrorMessage')}"
            )


def lead_from_event(event: Mapping[str, Any], expected: str) -> Lead:
    """The lead in an EventBridge event of detail-type ``expected``."""
    detail_type = event.get("detail-type")
    if detail_type != expected:
        raise ValueError(f"expected a {expected} event, got {detail_type!r}")
    detail = event.get("detail")
    if not isinstance(detail, dict):
        raise ValueError("the event has no detail object")
    return Lead.from_json(detail)
