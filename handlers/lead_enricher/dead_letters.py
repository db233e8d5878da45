"""What a dead letter is and how it goes back: pure classification for ler-retry.

ler-dlq receives two shapes: EventBridge's own target DLQ messages (the event itself, with the
rule in the message attributes) and Lambda's on-failure records for asynchronous invokes
(``requestContext`` + ``requestPayload``: an event for a chain stage, an S3 notification for
intake, a schedule's input for the jobs). ler-intake-queue's dead letters are queued leads.
Each re-drive adds one to a ``redrives`` counter carried inside the payload, so a letter that
keeps failing stops coming back after ``MAX_REDRIVES`` and is parked for a human instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from handlers.lead_enricher.contract import PIPELINE_EVENTS

MAX_REDRIVES = 3
Kind = Literal["event", "s3", "scheduled", "lead", "unknown"]


@dataclass(frozen=True)
class DeadLetter:
    """One dead letter, understood.

    Attributes:
        kind: ``event`` (re-put on the bus), ``s3`` (re-invoke intake), ``lead`` (back to
            ler-intake-queue), ``scheduled`` (nothing to do: the schedule runs again),
            ``unknown`` (parked for a human).
        payload: The thing to send again, counter already incremented.
        redrives: Re-drives so far (before this one).
        origin: The failed function or rule, for the log.
    """

    kind: Kind
    payload: dict[str, Any]
    redrives: int
    origin: str = ""

    @property
    def exhausted(self) -> bool:
        return self.redrives >= MAX_REDRIVES


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def classify(body: str, *, intake_queue: bool = False, origin: str = "") -> DeadLetter:
    """Understand one dead letter's body (``intake_queue``: it came from the intake DLQ)."""
    try:
        data = json.loads(body)
    except ValueError:
        return DeadLetter("unknown", {}, 0, origin)
    if not isinstance(data, dict):
        return DeadLetter("unknown", {}, 0, origin)
    if intake_queue:
        if "lead_id" not in data:
            return DeadLetter("unknown", data, 0, origin)
        count = _int(data.get("redrives"))
        return DeadLetter("lead", {**data, "redrives": count + 1}, count, origin)
    payload: Any = data
    if isinstance(data.get("requestPayload"), dict) and "requestContext" in data:
        payload = data["requestPayload"]
        origin = str((data.get("requestContext") or {}).get("functionArn") or origin)
    if payload.get("detail-type") in PIPELINE_EVENTS and isinstance(payload.get("detail"), dict):
        detail = dict(payload["detail"])
        count = _int(detail.get("redrives"))
        detail["redrives"] = count + 1
        return DeadLetter("event", {**payload, "detail": detail}, count, origin)
    records = payload.get("Records")
    if (
        isinstance(records, list)
        and records
        and all(isinstance(r, dict) and "s3" in r for r in records)
    ):
        count = _int(payload.get("redrives"))
        return DeadLetter("s3", {**payload, "redrives": count + 1}, count, origin)
    if payload.get("job") or payload == {}:
        return DeadLetter("scheduled", payload, 0, origin)
    return DeadLetter("unknown", payload, 0, origin)
