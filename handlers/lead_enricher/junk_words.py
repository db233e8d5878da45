"""A dropped lead in words: why it was dropped, how it came in, who it is, what they wrote.

The junk digest (``junk_digest``) and the rescue pages (``rescue``) say the same things the
same way, from the junk log's entries (``junk_log.junk_entry``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

REASONS = {
    "honeypot": "filled in the hidden anti-robot field",
    "disposable_domain": "a throwaway email address",
    "submitted_too_fast": "sent faster than a person can type",
    "ses_virus_verdict": "the mail carried a virus",
    "ses_spam_verdict": "the mail was judged spam",
    "bounce": "a bounced mail",
    "auto_reply": "an automatic reply",
    "name_has_link": "a link in the name",
    "many_links": "many links in the message",
    "links": "links in the message",
    "email_invalid": "an email address that cannot work",
    "spam_phrases": "sales spam (SEO, backlinks and the like)",
    "gibberish_name": "a name that is keyboard noise",
    "bulk_mail": "a bulk mailing",
    "role_address": "a shared mailbox such as noreply@",
    "no_name": "no name",
    "shouting": "written in capitals",
    "phone_invalid": "a phone number that cannot work",
    "no_contact": "no email address or phone number",
    "placeholder_email": "a placeholder email address",
    "low_quality": "too little to go on",
}
"""Why a lead was dropped, in the owner's words (the code stays in brackets, for support)."""
LANES = {"form": "web form", "mail": "email", "upload": "upload"}


def reason_words(code: str) -> str:
    words = REASONS.get(code, code.replace("_", " "))
    return f"{words[:1].upper()}{words[1:]} ({code})"


def cut(text: str, limit: int) -> str:
    """``text`` whole, or cut at a word boundary with "..." when longer than ``limit``."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    kept = flat[:limit].rsplit(" ", 1)[0]
    if kept.rfind("[") > kept.rfind("]"):  # never half a "[link to host]"
        kept = kept[: kept.rfind("[")].rstrip()
    return kept.rstrip(",.;:") + "..."


_URL = re.compile(r"(?:https?://|www\.)[^\s\"'<>]*[^\s\"'<>.,;:!?)]", re.IGNORECASE)
"""A web address as mail clients find one, without the sentence's closing punctuation."""


def without_links(text: str) -> str:
    """``text`` with each web address written as "[link to <host>]": a mail client turns an
    address in a quoted message into a link a thumb can hit next to the rescue link, and what
    a spammer linked to is the host, not the path."""

    def host(match: re.Match[str]) -> str:
        found = match.group(0)
        parsed = urlsplit(found if "://" in found else f"http://{found}")
        name = (parsed.hostname or "").removeprefix("www.")
        return f"[link to {name}]" if name else "[link]"

    return _URL.sub(host, text)


def _section(lead: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    found = lead.get(name)
    return found if isinstance(found, Mapping) else {}


def name_of(lead: Mapping[str, Any]) -> str:
    """The person's name as cleaned up, else as typed; "" when none was given."""
    contact, fields = _section(lead, "contact"), _section(lead, "fields")
    cleaned = " ".join(str(p) for p in (contact.get("first_name"), contact.get("last_name")) if p)
    typed = fields.get("name") or " ".join(
        str(fields[k]) for k in ("first_name", "last_name") if fields.get(k)
    )
    return " ".join((cleaned or str(typed or "")).split())


def address_of(lead: Mapping[str, Any]) -> str:
    """The email address, else the phone number; "" when neither was given."""
    contact, fields = _section(lead, "contact"), _section(lead, "fields")
    for value in (contact.get("email"), fields.get("email"), contact.get("phone"), fields.get("phone")):
        if value:
            return str(value)
    return ""


def company_of(lead: Mapping[str, Any]) -> str:
    contact, fields = _section(lead, "contact"), _section(lead, "fields")
    return str(contact.get("company") or fields.get("company") or "")


def who(lead: Mapping[str, Any]) -> str:
    """"Jane Doe (jane@acme.example)", or whichever of the two is known."""
    name, address = name_of(lead), address_of(lead)
    if name and address:
        return f"{name} ({address})"
    return name or address or "(no name or address)"
