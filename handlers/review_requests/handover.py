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

from handlers.common import html_kit as kit
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


def _shown(value: Any) -> str:
    shown = "-" if value in (None, "", []) else value
    if isinstance(shown, bool):
        shown = "yes" if shown else "no"
    return str(shown)


def _when(value: object, zone: str) -> str | None:
    """An ISO time from a record as the business reads it; None when absent, as is when odd."""

    if not value:
        return None
    try:
        return local_time(parse_iso(str(value)), zone)
    except ValueError:
        return str(value)


class _Handover:
    """The handover written once into both parts: plain-text lines and HTML (``html_kit``)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.html: list[str] = []
        self._fields: list[tuple[str, str]] = []

    def _flush(self) -> None:
        if self._fields:
            self.html.append(kit.fields(self._fields))
            self._fields = []

    def lead(self, sentence: str) -> None:
        self.text.append(sentence)
        self.html.append(kit.para(sentence, strong=True))

    def reach(self, name: str, email: Any, phone: Any) -> None:
        """One tap to answer: mail or call the customer (HTML only; the text lists both)."""
        buttons = []
        if email:
            buttons.append(kit.button(f"mailto:{email}", f"Email {name}", primary=True, method="get"))
        if phone:
            number = "".join(ch for ch in str(phone) if ch.isdigit() or ch == "+")
            buttons.append(kit.button(f"tel:{number}", f"Call {name}", primary=not buttons, method="get"))
        if buttons:
            self.html.append(kit.actions(*buttons))

    def section(self, title: str) -> None:
        self._flush()
        self.text += ["", title]
        self.html.append(kit.heading(title))

    def gap(self) -> None:
        """A blank line in the text; the HTML closes the table before it."""
        self._flush()
        self.text.append("")

    def field(self, label: str, value: Any) -> None:
        self.text.append(f"  {label}: {_shown(value)}")
        self._fields.append((label, _shown(value)))

    def note(self, line: str) -> None:
        self._flush()
        self.text.append(f"  {line}")
        self.html.append(kit.para(line))

    def quote(self, text: str) -> None:
        self._flush()
        lines = text.splitlines()
        self.text += [f"    {line}" for line in lines]
        if lines:
            self.html.append(kit.quote(lines))

    def reference(self, line: str) -> None:
        self._flush()
        self.text += ["", line]
        self.html.append(kit.detail(line))

    def mail(self, subject: str) -> kit.Mail:
        self._flush()
        return kit.Mail(
            subject,
            "\n".join(self.text) + "\n",
            kit.document(subject, kit.Html(f"<h1>{kit.esc(subject)}</h1>" + "".join(self.html))),
        )


def _contact(customer: Mapping[str, Any], trail: Sequence[Mapping[str, Any]]) -> tuple[Any, Any]:
    """(email, phone): the sheet mirror's, else where rrs-audit says the ask was claimed to go
    (a customer gone from the sheet since: the address the owner needs is still on record)."""
    email, phone = customer.get("email"), customer.get("phone")
    for entry in reversed(trail):
        facts = dict(entry.get("facts") or {}) if entry.get("event") == "message" else {}
        if not email and facts.get("channel") == "email":
            email = facts.get("to")
        if not phone and facts.get("channel") == "sms":
            phone = facts.get("to")
    return email, phone


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
) -> kit.Mail:
    """The handover mail (subject, plain text, HTML): customer, job, original signal, grade,
    feedback, in plain words, times in the business's zone ``zone``; ids only on the last,
    reference line."""
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
    email, phone = _contact(customer, trail)
    out = _Handover()
    out.lead(f"{name} needs a personal reply: {what}.")
    out.reach(name, email, phone)
    out.section("Customer")
    out.field("Name", name)
    out.field("Email", email)
    out.field("Phone", phone)
    out.field("Review request by", CHANNELS.get(str(request.get("channel")), request.get("channel")))
    out.section("The job")
    out.field("Job", job.get("job_title") or request.get("job_title"))
    out.field("Finished", _when(job.get("completed_at"), zone))
    out.section("What we knew before asking")
    out.field("Rating", f"{rating} out of 5" if rating not in (None, "") else None)
    out.field("Notes", signal.get("notes"))
    out.field("Complaint raised", signal.get("complaint"))
    out.field("Earlier mood", signal.get("prior_sentiment"))
    out.field("Past complaints", signal.get("past_complaints"))
    out.section("How the customer was read")
    if grades:
        facts = dict(grades[-1].get("facts") or {})
        out.field("Mood", facts.get("band"))
        out.field("Judged from", HOW.get(str(facts.get("source")), facts.get("source")))
        out.field("Why", "; ".join(facts.get("reasons") or []))
        if facts.get("override"):
            out.field("Rule that decided", facts.get("override"))
    else:
        out.note("not read yet")
    out.section("Private feedback")
    if feedback:
        for entry in reversed(feedback):
            facts = dict(entry.get("facts") or {})
            when = _when(facts.get("submitted_at") or entry.get("at"), zone) or "-"
            given = facts.get("rating")
            out.note(when + (f", rating {given} out of 5" if given else ""))
            out.quote(str(facts.get("text", "")))
    else:
        out.note("none")
    if reason == "unconfirmed_send":
        out.section("What to do")
        out.note(OWNER_ADVICE)
        out.section("The message as it was claimed")
        messages = [e for e in trail if e.get("event") == "message"]
        if messages:
            facts = dict(messages[-1].get("facts") or {})
            out.field("To", facts.get("to"))
            out.field("By", facts.get("channel"))
            out.field("Claimed", _when(request.get("sent_at"), zone))
            out.field("Subject", facts.get("subject"))
            out.quote(str(facts.get("text", "")))
        else:
            out.note("not on record")
    state = request.get("state")
    out.gap()
    standing = STATES.get(str(state), state)
    if reason == "unconfirmed_send" and state == "asked":  # "was sent" is what nobody knows
        standing = "claimed for sending; never confirmed sent"
    out.field("Where it stands", standing)
    if earlier:
        times = "; ".join(_when(e.get("at"), zone) or "-" for e in earlier)
        out.note(f"Earlier follow-ups asked for this customer: {times}")
    refs = [f"request {request_id}"]
    for label, key in (("customer", "customer_id"), ("completion", "completion_id")):
        value = request.get(key) or (customer.get(key) if key == "customer_id" else None)
        if value:
            refs.append(f"{label} {value}")
    out.reference(f"Reference (for support): {', '.join(refs)}. Times in {zone}.")
    return out.mail(subject)
