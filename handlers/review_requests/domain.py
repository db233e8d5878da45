"""The vocabulary of the system: request states, grade bands, the signal, the customer, ids.

A request moves ``scheduled`` -> ``asked`` / ``diverted`` / ``suppressed`` and never back:

* ``asked``: graded happy, sent the public review link;
* ``diverted``: graded neutral or unhappy, sent the private feedback link (unhappy also
  escalated to the owner);
* ``suppressed``: nothing sent (opted out, not eligible, or given up on by the sweep).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from handlers.common import formats
from handlers.review_requests.contract import ESCALATE, SEND, WORK_MESSAGE_VERSION


class State(StrEnum):
    SCHEDULED = "scheduled"
    ASKED = "asked"
    DIVERTED = "diverted"
    SUPPRESSED = "suppressed"


TERMINAL = frozenset({State.ASKED, State.DIVERTED, State.SUPPRESSED})


class Band(StrEnum):
    """How the customer feels about the job, as graded from the signal."""

    HAPPY = "happy"
    NEUTRAL = "neutral"
    UNHAPPY = "unhappy"


class Channel(StrEnum):
    EMAIL = "email"
    SMS = "sms"


class Purpose(StrEnum):
    """What the ask points at; only ``review`` carries the public review link."""

    REVIEW = "review"
    FEEDBACK = "feedback"


def purpose_for(band: Band) -> Purpose:
    """Only customers graded happy are pointed at the public review."""
    return Purpose.REVIEW if band is Band.HAPPY else Purpose.FEEDBACK


def request_id_for(completion_id: str) -> str:
    """The request id of a completion: deterministic, so a redelivery finds the same request.

    Hashed rather than copied so any completion id becomes a valid schedule name
    (``[0-9A-Za-z_.-]``, at most 64 characters) and reveals nothing of the tool's ids.
    """
    digest = hashlib.sha256(f"rrs-completion:{completion_id}".encode()).hexdigest()
    return f"rq-{digest[:40]}"


@dataclass(frozen=True)
class Signal:
    """What is known about the customer's mood, captured at the door and never re-read.

    Attributes:
        source: ``event`` (the completion carried a rating or notes), ``history`` (only the
            sheet's prior sentiment), or ``none``.
        rating: The tool's rating of the job, 1-5, if any.
        notes: Free-text notes from the job (technician or customer), trimmed.
        complaint: The tool flagged a complaint or call-back on this job.
        prior_sentiment: ``positive`` / ``neutral`` / ``negative`` from the sheet.
        past_complaints: Complaints on record in the sheet.
    """

    source: str = "none"
    rating: int | None = None
    notes: str = ""
    complaint: bool = False
    prior_sentiment: str | None = None
    past_complaints: int = 0

    def as_item(self) -> dict[str, Any]:
        """The DynamoDB map (None dropped: DynamoDB keeps no nulls worth having)."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_item(cls, item: Mapping[str, Any] | None) -> Signal:
        data = dict(item or {})
        rating = data.get("rating")
        return cls(
            source=str(data.get("source", "none")),
            rating=None if rating is None else int(rating),
            notes=str(data.get("notes", "")),
            complaint=bool(data.get("complaint", False)),
            prior_sentiment=None
            if data.get("prior_sentiment") is None
            else str(data["prior_sentiment"]),
            past_complaints=int(data.get("past_complaints", 0)),
        )


SENTIMENTS = ("positive", "neutral", "negative")


@dataclass(frozen=True)
class Customer:
    """A customer as the gate sees them: the sheet's row overlaid with the event's details."""

    customer_id: str
    name: str = ""
    email: str | None = None
    phone: str | None = None
    timezone: str | None = None
    channel: str | None = None
    prior_sentiment: str | None = None
    past_complaints: int = 0
    do_not_ask: bool = False

    @property
    def first_name(self) -> str:
        """The first word of the name, or empty when unknown."""
        parts = self.name.split()
        return parts[0] if parts else ""

    @property
    def contacts(self) -> tuple[str, ...]:
        """Every known contact, each checked against rrs-optout."""
        return tuple(c for c in (self.email, self.phone) if c)

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Customer:
        return cls(
            customer_id=str(item["customer_id"]),
            name=str(item.get("name", "")),
            email=item.get("email") or None,
            phone=item.get("phone") or None,
            timezone=item.get("timezone") or None,
            channel=item.get("channel") or None,
            prior_sentiment=item.get("prior_sentiment") or None,
            past_complaints=int(item.get("past_complaints", 0) or 0),
            do_not_ask=bool(item.get("do_not_ask", False)),
        )


@dataclass(frozen=True)
class WorkMessage:
    """A work message; ``kind`` picks its queue (``work.KindRoutedQueue``).

    Attributes:
        kind: ``send`` (rrs-work, rrs-sender) or ``escalate`` (rrs-escalations, rrs-escalator).
        request_id: The request concerned.
        reason: For escalations: ``unhappy_grade``, ``private_feedback`` or ``straggler``.
        dedupe_key: For escalations: the same key means the same escalation.
    """

    kind: str
    request_id: str
    reason: str = ""
    dedupe_key: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        """The wire form, on a queue or in an ask schedule's input, with its format version."""
        body: dict[str, Any] = {"kind": self.kind, "request_id": self.request_id}
        if self.reason:
            body["reason"] = self.reason
        if self.dedupe_key:
            body["dedupe_key"] = self.dedupe_key
        body.update(self.extra)
        return formats.stamp(body, WORK_MESSAGE_VERSION)


FEEDBACK_ACTION = "feedback"
"""The action the feedback link's ref token is issued for (rrs-sender signs, rrs-webhook checks)."""

_REQUEST_ID = re.compile(r"^rq-[0-9a-f]{40}$")


def ref_subject(request_id: str) -> str:
    """What the short feedback ref signs: the request id's 160-bit hash as a decimal number,
    which ``issue_short_token`` packs into 20 bytes (the id as text would take 43), so the
    feedback link stays under 100 characters."""
    if _REQUEST_ID.match(request_id):
        return str(int(request_id[3:], 16))
    return request_id


def request_id_of(subject: str) -> str:
    """The request id a short ref's subject stands for (``ref_subject`` reversed)."""
    if subject.isdigit():
        return f"rq-{int(subject):040x}"
    return subject


def send_message(request_id: str) -> WorkMessage:
    return WorkMessage(SEND, request_id)


def escalate_message(request_id: str, reason: str, dedupe_key: str) -> WorkMessage:
    return WorkMessage(ESCALATE, request_id, reason=reason, dedupe_key=dedupe_key)
