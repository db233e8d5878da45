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


def _line(label: str, value: Any) -> str:
    shown = "-" if value in (None, "", []) else value
    return f"  {label}: {shown}"


def build(
    *,
    reason: str,
    request_id: str,
    request: Mapping[str, Any] | None,
    customer: Mapping[str, Any] | None,
    job: Mapping[str, Any] | None,
    trail: Sequence[Mapping[str, Any]],
    business: str,
) -> tuple[str, str]:
    """(subject, body) of the handover: customer, job, original signal, grade, feedback."""
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
    lines = [
        f"{name} needs a personal reply: {what}.",
        "",
        "Customer",
        _line("name", name),
        _line("customer id", request.get("customer_id") or customer.get("customer_id")),
        _line("email", customer.get("email")),
        _line("phone", customer.get("phone")),
        _line("asked on", request.get("channel")),
        "",
        "Job",
        _line("title", job.get("job_title") or request.get("job_title")),
        _line("completed", job.get("completed_at")),
        _line("completion id", request.get("completion_id")),
        "",
        "Original signal",
        _line("rating (1-5)", signal.get("rating")),
        _line("notes", signal.get("notes")),
        _line("complaint flagged", signal.get("complaint")),
        _line("prior sentiment", signal.get("prior_sentiment")),
        _line("past complaints", signal.get("past_complaints")),
        "",
        "Grade",
    ]
    if grades:
        facts = dict(grades[-1].get("facts") or {})
        lines += [
            _line("band", facts.get("band")),
            _line("how", facts.get("source")),
            _line("model's reasons", "; ".join(facts.get("reasons") or [])),
            _line("rule applied", facts.get("override")),
        ]
    else:
        lines.append("  not graded yet")
    lines += ["", "Private feedback"]
    if feedback:
        for entry in reversed(feedback):
            facts = dict(entry.get("facts") or {})
            lines.append(
                f"  [{facts.get('submitted_at', entry.get('at'))}] rating {facts.get('rating') or '-'}"
            )
            lines += [f"    {text_line}" for text_line in str(facts.get("text", "")).splitlines()]
    else:
        lines.append("  none")
    if reason == "unconfirmed_send":
        lines += ["", "What to do", f"  {OWNER_ADVICE}", "", "The message as it was claimed"]
        messages = [e for e in trail if e.get("event") == "message"]
        if messages:
            facts = dict(messages[-1].get("facts") or {})
            lines += [
                _line("to", facts.get("to")),
                _line("channel", facts.get("channel")),
                _line("claimed at", request.get("sent_at")),
                _line("subject", facts.get("subject")),
            ]
            lines += [f"    {text_line}" for text_line in str(facts.get("text", "")).splitlines()]
        else:
            lines.append("  not on record")
    lines += [
        "",
        _line("request state", request.get("state")),
        _line("request id", request_id),
    ]
    if earlier:
        times = ", ".join(str(e.get("at")) for e in earlier)
        lines.append(f"  earlier escalations for this request: {times}")
    return subject, "\n".join(lines) + "\n"
