"""The owner's handover email, and the append-only claim that keeps it to one per escalation.

An escalation is identified by its request and ``dedupe_key`` (``unhappy-grade``,
``feedback-<event id>``, ``straggler``). Its markers live in rrs-audit, which nobody may update
or delete, so the claim is an append: ``escalation#<key>#claim#<n>`` written with
``attribute_not_exists``, then ``escalation#<key>#sent`` after the email went out. A redelivery
finds ``sent`` and stops; a concurrent copy loses the claim; a claim older than the lease with
no ``sent`` belonged to an attempt that died, and the next claim number takes over.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from handlers.common.html_kit import local_time
from handlers.common.unconfirmed_sends import OWNER_ADVICE
from handlers.review_requests.timing import parse_iso

REASONS = {
    "unhappy_grade": "an unhappy customer",
    "private_feedback": "private feedback from a customer",
    "straggler": "a review request that could not be sent",
    "unconfirmed_send": "a review request that was never confirmed sent",
}


def marker_prefix(dedupe_key: str) -> str:
    return f"escalation#{dedupe_key}#"


@dataclass(frozen=True)
class ClaimDecision:
    """``action`` is ``send`` (with the claim number to write), ``sent`` or ``in_flight``."""

    action: str
    claim_number: int = 0


def claim_decision(
    markers: Sequence[Mapping[str, Any]], dedupe_key: str, now: dt.datetime, lease: dt.timedelta
) -> ClaimDecision:
    """What to do given the escalation's existing markers."""
    prefix = marker_prefix(dedupe_key)
    claims = sorted(str(m["ts"]) for m in markers if str(m["ts"]).startswith(prefix + "claim#"))
    if any(str(m["ts"]) == prefix + "sent" for m in markers):
        return ClaimDecision("sent")
    if not claims:
        return ClaimDecision("send", 0)
    latest = next(m for m in markers if str(m["ts"]) == claims[-1])
    claimed_at = parse_iso(str(latest.get("at") or "1970-01-01T00:00:00Z"))
    if now - claimed_at < lease:
        return ClaimDecision("in_flight")
    return ClaimDecision("send", len(claims))


def claim_key(dedupe_key: str, number: int) -> str:
    return f"{marker_prefix(dedupe_key)}claim#{number:03d}"


def sent_key(dedupe_key: str) -> str:
    return f"{marker_prefix(dedupe_key)}sent"


STATES = {
    "scheduled": "the review request is still to go out",
    "asked": "the review request was sent",
    "diverted": "no review request: it came to you instead",
    "suppressed": "no review request was sent",
}
CHANNELS = {"email": "email", "sms": "text message"}
HOW = {"model": "read from the job's notes and rating", "fallback": "the rating alone (no model answer)"}


def _line(label: str, value: Any) -> str:
    shown = "-" if value in (None, "", []) else value
    if isinstance(shown, bool):
        shown = "yes" if shown else "no"
    return f"  {label}: {shown}"


def _when(value: object, zone: str) -> str | None:
    """An ISO time from a record as the business reads it; None when absent, as is when odd."""

    if not value:
        return None
    try:
        return local_time(parse_iso(str(value)), zone)
    except ValueError:
        return str(value)


def build(
    *,
    reason: str,
    request_id: str,
    request: Mapping[str, Any] | None,
    customer: Mapping[str, Any] | None,
    job: Mapping[str, Any] | None,
    trail: Sequence[Mapping[str, Any]],
    business: str,
    zone: str = "UTC",
) -> tuple[str, str]:
    """(subject, body) of the handover: customer, job, original signal, grade, feedback, in
    plain words, times in the business's zone ``zone``; ids only on the last, reference line."""
    request = request or {}
    customer = customer or {}
    job = job or {}
    name = customer.get("name") or request.get("customer_name") or "a customer"
    what = REASONS.get(reason, reason)
    subject = f"[{business}] Please follow up: {what} ({name})"[:150]
    signal = dict(request.get("signal") or job.get("signal") or {})
    grades = [e for e in trail if e.get("event") == "grade"]
    feedback = [e for e in trail if e.get("event") == "feedback"]
    earlier = [e for e in trail if e.get("event") == "escalation_sent"]
    rating = signal.get("rating")
    lines = [
        f"{name} needs a personal reply: {what}.",
        "",
        "Customer",
        _line("Name", name),
        _line("Email", customer.get("email")),
        _line("Phone", customer.get("phone")),
        _line("Review request by", CHANNELS.get(str(request.get("channel")), request.get("channel"))),
        "",
        "The job",
        _line("Job", job.get("job_title") or request.get("job_title")),
        _line("Finished", _when(job.get("completed_at"), zone)),
        "",
        "What we knew before asking",
        _line("Rating", f"{rating} out of 5" if rating not in (None, "") else None),
        _line("Notes", signal.get("notes")),
        _line("Complaint raised", signal.get("complaint")),
        _line("Earlier mood", signal.get("prior_sentiment")),
        _line("Past complaints", signal.get("past_complaints")),
        "",
        "How the customer was read",
    ]
    if grades:
        facts = dict(grades[-1].get("facts") or {})
        lines += [
            _line("Mood", facts.get("band")),
            _line("Judged from", HOW.get(str(facts.get("source")), facts.get("source"))),
            _line("Why", "; ".join(facts.get("reasons") or [])),
        ]
        if facts.get("override"):
            lines.append(_line("Rule that decided", facts.get("override")))
    else:
        lines.append("  not read yet")
    lines += ["", "Private feedback"]
    if feedback:
        for entry in reversed(feedback):
            facts = dict(entry.get("facts") or {})
            when = _when(facts.get("submitted_at") or entry.get("at"), zone) or "-"
            given = facts.get("rating")
            lines.append(f"  {when}" + (f", rating {given} out of 5" if given else ""))
            lines += [f"    {text_line}" for text_line in str(facts.get("text", "")).splitlines()]
    else:
        lines.append("  none")
    if reason == "unconfirmed_send":
        lines += ["", "What to do", f"  {OWNER_ADVICE}", "", "The message as it was claimed"]
        messages = [e for e in trail if e.get("event") == "message"]
        if messages:
            facts = dict(messages[-1].get("facts") or {})
            lines += [
                _line("To", facts.get("to")),
                _line("By", facts.get("channel")),
                _line("Claimed", _when(request.get("sent_at"), zone)),
                _line("Subject", facts.get("subject")),
            ]
            lines += [f"    {text_line}" for text_line in str(facts.get("text", "")).splitlines()]
        else:
            lines.append("  not on record")
    state = request.get("state")
    lines += ["", _line("Where it stands", STATES.get(str(state), state))]
    if earlier:
        times = "; ".join(_when(e.get("at"), zone) or "-" for e in earlier)
        lines.append(f"  Earlier follow-ups asked for this customer: {times}")
    refs = [f"request {request_id}"]
    for label, key in (("customer", "customer_id"), ("completion", "completion_id")):
        value = request.get(key) or (customer.get(key) if key == "customer_id" else None)
        if value:
            refs.append(f"{label} {value}")
    lines += ["", f"Reference (for support): {', '.join(refs)}. Times in {zone}."]
    return subject, "\n".join(lines) + "\n"
