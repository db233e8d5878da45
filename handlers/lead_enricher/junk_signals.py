"""Deterministic junk signals, weighed into one score in [0, 1].

Each signal has a weight: positive ones point at junk (a throwaway inbox, links in the
message, a keyboard-mash name), negative ones at a real lead (a known contact, a company the
provider knows, a valid phone). A few are decisive on their own (no way to contact the lead).
The filter compares the score with the configured bands; the signal with the largest weight
names the reason a dropped lead is logged under.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from handlers.lead_enricher.domains import is_disposable, is_free_mail, is_placeholder
from handlers.lead_enricher.lead import Lead

WEIGHTS: dict[str, float] = {
    "disposable_domain": 0.8,
    "name_has_link": 0.6,
    "many_links": 0.5,
    "email_invalid": 0.45,
    "spam_phrases": 0.4,
    "gibberish_name": 0.35,
    "links": 0.3,
    "bulk_mail": 0.3,
    "role_address": 0.3,
    "no_name": 0.15,
    "shouting": 0.15,
    "phone_invalid": 0.1,
    "known_contact": -0.4,
    "known_company": -0.2,
    "business_email": -0.1,
    "valid_phone": -0.1,
}
DECISIVE = ("no_contact", "placeholder_email")
"""Signals that make a lead junk whatever else it has."""

SPAM_PHRASES = (
    "seo",
    "backlinks",
    "backlink",
    "guest post",
    "first page of google",
    "rank your website",
    "crypto",
    "bitcoin",
    "casino",
    "viagra",
    "loan offer",
    "web design services",
    "lead generation services",
    "increase your traffic",
)
ROLE_LOCAL_PARTS = frozenset(
    {"noreply", "no-reply", "donotreply", "do-not-reply", "test", "spam", "abuse", "postmaster"}
)
_KEYBOARD_RUNS = ("qwert", "asdf", "zxcv", "hjkl", "uiop")


@dataclass
class Weighed:
    """The signals found, the score, and the reason the strongest junk signal gives."""

    signals: list[str] = field(default_factory=list)
    score: float = 0.0
    decisive: str | None = None

    @property
    def reason(self) -> str:
        if self.decisive:
            return self.decisive
        junk = [s for s in self.signals if WEIGHTS.get(s, 0) > 0]
        return max(junk, key=lambda s: WEIGHTS[s]) if junk else "low_quality"


def _gibberish(word: str) -> bool:
    lower = word.lower()
    if any(run in lower for run in _KEYBOARD_RUNS):
        return True
    letters = [ch for ch in lower if ch.isalpha()]
    if len(letters) >= 5 and not any(ch in "aeiouy" for ch in letters):
        return True
    return bool(re.search(r"(.)\1\1\1", lower))


def weigh(lead: Lead) -> Weighed:
    """Every signal in the lead, and their weighted score clamped to [0, 1]."""
    contact = lead.contact
    email = contact.email if contact else None
    phone = contact.phone if contact else None
    domain = contact.email_domain if contact else None
    found = [
        *_address_signals(set(lead.normalize.get("flags", [])), email, domain),
        *_name_signals(lead),
        *_message_signals(lead),
        *_trust_signals(lead, domain, phone),
    ]
    decisive = _decisive(email, phone, domain)
    total = 1.0 if decisive else sum(WEIGHTS[s] for s in found)
    return Weighed(
        signals=found, score=round(min(1.0, max(0.0, total)), 4), decisive=decisive
    )


def _decisive(email: str | None, phone: str | None, domain: str | None) -> str | None:
    """A reason that junks the lead whatever else it shows: nothing to contact it by."""
    if not email and not phone:
        return "no_contact"
    if email and is_placeholder(domain) and not phone:
        return "placeholder_email"
    return None


def _address_signals(flags: set[str], email: str | None, domain: str | None) -> list[str]:
    """What the normaliser refused, and what the email address says of its sender."""
    found: list[str] = [f for f in ("email_invalid", "phone_invalid") if f in flags]
    if domain and is_disposable(domain):
        found.append("disposable_domain")
    if email and email.partition("@")[0] in ROLE_LOCAL_PARTS:
        found.append("role_address")
    return found


def _name_signals(lead: Lead) -> list[str]:
    """A link in the name fields, no name, or a name no person has."""
    found: list[str] = []
    name = lead.contact.full_name if lead.contact else ""
    raw_name = " ".join(lead.fields.get(k, "") for k in ("name", "first_name", "last_name"))
    if re.search(r"https?://|www\.", raw_name, re.IGNORECASE):
        found.append("name_has_link")
    if not name:
        found.append("no_name")
    elif any(_gibberish(w) for w in name.split()):
        found.append("gibberish_name")
    return found


def _message_signals(lead: Lead) -> list[str]:
    """Links, spam phrases and shouting in the message; bulk mail headers."""
    found: list[str] = []
    urls = int(lead.signals.get("url_count") or 0)
    if urls >= 4:
        found.append("many_links")
    elif urls >= 2:
        found.append("links")
    message = lead.message.lower()
    if any(re.search(rf"\b{re.escape(phrase)}\b", message) for phrase in SPAM_PHRASES):
        found.append("spam_phrases")
    letters = [ch for ch in lead.message if ch.isalpha()]
    if len(letters) > 20 and all(ch.isupper() for ch in letters):
        found.append("shouting")
    if lead.signals.get("bulk"):
        found.append("bulk_mail")
    return found


def _trust_signals(lead: Lead, domain: str | None, phone: str | None) -> list[str]:
    """What speaks for the lead: a known contact or company, a business address, a phone."""
    found: list[str] = []
    if lead.dedupe and lead.dedupe.crm_id:
        found.append("known_contact")
    if lead.enrichment and lead.enrichment.status == "enriched":
        found.append("known_company")
    if domain and not is_free_mail(domain) and not is_disposable(domain):
        found.append("business_email")
    if phone:
        found.append("valid_phone")
    return found
