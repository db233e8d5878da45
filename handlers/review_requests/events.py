"""The job tool's three webhook events, parsed and checked by hand (cheap to import).

Every event is a JSON object with ``type`` and ``id``:

* ``job.completed``: ``completion_id``, ``customer_id``, ``completed_at`` (ISO-8601 with an
  offset); optional ``job`` ``{id, title}``, ``customer`` ``{name, email, phone, timezone,
  channel}`` and ``signal`` ``{rating (1-5), notes, complaint (bool)}``.
* ``feedback.submitted``: ``ref`` (the token from the feedback link), ``text``; optional
  ``rating`` and ``submitted_at``.
* ``contact.opted_out``: ``contact`` (an email address or a phone number); optional ``source``.

Anything else is a 400 with a JSON error, raised as ``RequestError``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from handlers.common.function_url import RequestError
from handlers.review_requests.timing import parse_iso

MAX_ID_CHARS = 200
MAX_FEEDBACK_CHARS = 5000


def _bad(message: str) -> RequestError:
    return RequestError(400, "invalid_event", message)


def _identifier(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_CHARS:
        raise _bad(f"{name} must be a non-empty string of at most {MAX_ID_CHARS} characters")
    return value.strip()


def _optional_mapping(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(f"{name} must be an object")
    return value


def _timestamp(data: Mapping[str, Any], name: str, *, required: bool) -> dt.datetime | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise _bad(f"{name} must be an ISO-8601 timestamp with an offset")
    try:
        return parse_iso(value)
    except ValueError as err:
        raise _bad(f"{name} must be an ISO-8601 timestamp with an offset") from err


@dataclass(frozen=True)
class Completion:
    event_id: str
    completion_id: str
    customer_id: str
    completed_at: dt.datetime
    job_id: str
    job_title: str
    customer: dict[str, Any] = field(default_factory=dict)
    signal: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Feedback:
    event_id: str
    ref: str
    text: str
    rating: int | None
    submitted_at: dt.datetime | None


@dataclass(frozen=True)
class OptOut:
    event_id: str
    contact: str
    source: str


Event = Completion | Feedback | OptOut


def parse_event(data: dict[str, Any]) -> Event:
    """The typed event, or RequestError(400) naming the first problem."""
    kind = data.get("type")
    event_id = _identifier(data, "id")
    if kind == "job.completed":
        completed_at = _timestamp(data, "completed_at", required=True)
        assert completed_at is not None
        job = _optional_mapping(data, "job")
        title = job.get("title", "")
        if not isinstance(title, str):
            raise _bad("job.title must be a string")
        signal = _optional_mapping(data, "signal")
        rating = signal.get("rating")
        if rating is not None and (
            not isinstance(rating, int) or isinstance(rating, bool) or not 1 <= rating <= 5
        ):
            raise _bad("signal.rating must be an integer from 1 to 5")
        if "complaint" in signal and not isinstance(signal["complaint"], bool):
            raise _bad("signal.complaint must be true or false")
        if "notes" in signal and not isinstance(signal["notes"], str):
            raise _bad("signal.notes must be a string")
        return Completion(
            event_id=event_id,
            completion_id=_identifier(data, "completion_id"),
            customer_id=_identifier(data, "customer_id"),
            completed_at=completed_at,
            job_id=str(job.get("id", ""))[:MAX_ID_CHARS],
            job_title=" ".join(title.split())[:120],
            customer=_optional_mapping(data, "customer"),
            signal=signal,
            raw=data,
        )
    if kind == "feedback.submitted":
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            raise _bad("text must be a non-empty string")
        rating = data.get("rating")
        if rating is not None and (
            not isinstance(rating, int) or isinstance(rating, bool) or not 1 <= rating <= 5
        ):
            raise _bad("rating must be an integer from 1 to 5")
        ref = data.get("ref")
        if not isinstance(ref, str) or not ref:
            raise _bad("ref must be the token of the feedback link")
        return Feedback(
            event_id=event_id,
            ref=ref,
            text=text.strip()[:MAX_FEEDBACK_CHARS],
            rating=rating,
            submitted_at=_timestamp(data, "submitted_at", required=False),
        )
    if kind == "contact.opted_out":
        contact = data.get("contact")
        if not isinstance(contact, str) or not contact.strip() or len(contact) > 254:
            raise _bad("contact must be an email address or a phone number")
        source = data.get("source", "tool")
        return OptOut(
            event_id=event_id,
            contact=contact,
            source=str(source)[:50] if isinstance(source, str) else "tool",
        )
    raise _bad("type must be job.completed, feedback.submitted or contact.opted_out")
