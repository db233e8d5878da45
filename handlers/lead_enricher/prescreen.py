"""Intake's cheap spam pre-screen: only what is certain junk, decided without any lookup.

A lead that fails here never enters the chain: it goes straight to ler-junk with its reason
(and into the next digest). Anything merely suspicious passes on; ler-filter weighs it.
"""

from __future__ import annotations

from handlers.lead_enricher.domains import is_disposable
from handlers.lead_enricher.inputs import RawLead


def _rendered_at(value: object) -> float | None:
    """Epoch seconds from a render timestamp in seconds or milliseconds."""
    try:
        number = float(str(value))
    except ValueError:
        return None
    if number > 1e11:  # milliseconds
        number /= 1000.0
    return number if number > 0 else None


def prescreen(raw: RawLead, *, now: float, min_submit_seconds: int) -> str | None:
    """The junk reason, or None when the lead may go on.

    Reasons: ``honeypot`` (the hidden field a person never sees was filled),
    ``disposable_domain`` (a throwaway inbox), ``submitted_too_fast`` (sent sooner after the
    form was rendered than a person can type), ``ses_virus_verdict`` / ``ses_spam_verdict``
    (SES scanned the mail and failed it), ``auto_reply`` and ``bounce`` (no person wrote it).
    """
    signals = raw.signals
    if str(signals.get("honeypot") or "").strip():
        return "honeypot"
    email = raw.fields.get("email", "")
    if "@" in email and is_disposable(email.rpartition("@")[2].strip().lower()):
        return "disposable_domain"
    rendered = _rendered_at(signals.get("rendered_at")) if signals.get("rendered_at") else None
    if rendered is not None and 0 <= now - rendered < min_submit_seconds:
        return "submitted_too_fast"
    if str(signals.get("ses_virus_verdict", "")).upper() == "FAIL":
        return "ses_virus_verdict"
    if str(signals.get("ses_spam_verdict", "")).upper() == "FAIL":
        return "ses_spam_verdict"
    if signals.get("bounce"):
        return "bounce"
    if signals.get("auto_submitted"):
        return "auto_reply"
    return None
