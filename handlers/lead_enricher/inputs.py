"""The three lanes' inputs turned into one shape: canonical fields, free text, signals.

Forms and webhooks send JSON (or url-encoded) objects with whatever field names the form tool
uses; mail arrives as raw MIME; uploads are CSV files with a header row. Each parser maps the
names it recognises onto the canonical ones below and keeps the signals the pre-screen and the
filter weigh (honeypot, render time, SES verdicts, auto-replies). No AWS here.
"""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import getaddresses
from typing import TYPE_CHECKING, Any

from handlers.common.emails import is_email
from handlers.lead_enricher.lead import MAX_MESSAGE_CHARS

if TYPE_CHECKING:
    from email.message import EmailMessage

CANONICAL = (
    "email",
    "phone",
    "name",
    "first_name",
    "last_name",
    "company",
    "country",
    "job_title",
    "website",
)
ALIASES: dict[str, str] = {
    **{name: name for name in CANONICAL},
    "e_mail": "email",
    "email_address": "email",
    "emailaddress": "email",
    "mail": "email",
    "work_email": "email",
    "telephone": "phone",
    "tel": "phone",
    "mobile": "phone",
    "phone_number": "phone",
    "phonenumber": "phone",
    "mobile_phone": "phone",
    "full_name": "name",
    "fullname": "name",
    "your_name": "name",
    "contact_name": "name",
    "firstname": "first_name",
    "given_name": "first_name",
    "fname": "first_name",
    "forename": "first_name",
    "lastname": "last_name",
    "surname": "last_name",
    "family_name": "last_name",
    "lname": "last_name",
    "company_name": "company",
    "organisation": "company",
    "organization": "company",
    "business": "company",
    "business_name": "company",
    "employer": "company",
    "country_code": "country",
    "country_name": "country",
    "title": "job_title",
    "jobtitle": "job_title",
    "role": "job_title",
    "position": "job_title",
    "url": "website",
    "web": "website",
    "company_website": "website",
    "site": "website",
}
MESSAGE_KEYS = frozenset({"message", "comments", "comment", "enquiry", "inquiry", "notes", "body"})
HONEYPOT_KEYS = frozenset({"gotcha", "honeypot", "hp"})
"""Canonical names (leading underscores dropped) of the hidden field people never fill."""
RENDERED_KEYS = frozenset({"rendered_at", "form_rendered_at"})
"""Canonical names of the render timestamp a form sends along (epoch seconds or ms)."""
NESTED_KEYS = ("fields", "data", "lead")
MAX_FIELD_CHARS = 500


@dataclass
class RawLead:
    """One lead before normalisation: canonical field strings, free text, signals."""

    fields: dict[str, str] = field(default_factory=dict)
    message: str = ""
    signals: dict[str, Any] = field(default_factory=dict)


def canonical_key(name: str) -> str:
    """``"E-mail Address"`` -> ``"e_mail_address"``."""
    return re.sub(r"[^a-z0-9_]+", "_", name.strip().lower()).strip("_")


def alias_for(name: str) -> str | None:
    """The canonical field a form's field name means (``"E-mail Address"`` -> ``email``)."""
    key = canonical_key(name)
    return ALIASES.get(key) or ALIASES.get(key.replace("_", ""))


def _text(value: Any) -> str:
    if value is None or isinstance(value, dict | list):
        return ""
    return str(value).strip()[:MAX_FIELD_CHARS]


def from_mapping(payload: Mapping[str, Any]) -> RawLead:
    """A form/webhook object (flat, or with its answers nested under fields/data/lead)."""
    flat: dict[str, Any] = {}
    for key in NESTED_KEYS:
        nested = payload.get(key)
        if isinstance(nested, Mapping):
            flat.update(nested)
    flat.update({k: v for k, v in payload.items() if k not in NESTED_KEYS})
    raw = RawLead()
    for name, value in flat.items():
        key = canonical_key(str(name))
        if key in HONEYPOT_KEYS:
            raw.signals["honeypot"] = _text(value)
        elif key in RENDERED_KEYS:
            raw.signals["rendered_at"] = _text(value)
        elif key in MESSAGE_KEYS:
            raw.message = "" if value is None else str(value).strip()[:MAX_MESSAGE_CHARS]
        elif (field_name := alias_for(key)) and _text(value):
            raw.fields.setdefault(field_name, _text(value))
    raw.signals["url_count"] = count_urls(raw.message)
    return raw


def count_urls(text: str) -> int:
    return len(re.findall(r"https?://|www\.", text, flags=re.IGNORECASE))


# Mail -------------------------------------------------------------------------------------

_LABELLED_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z \-_]{1,30})\s*[:=]\s*(.+?)\s*$")
_BOUNCE_SENDERS = ("mailer-daemon@", "postmaster@")


class UnreadableMail(ValueError):
    """A mail the parser cannot read (nested too deep, broken beyond recovery): junk it."""


def from_mime(data: bytes) -> RawLead:
    """A raw RFC 5322 message as SES stored it; ``UnreadableMail`` when it cannot be read.

    The standard library's mail parser and ``get_body`` recurse once per multipart level, so a
    mail nested a thousand levels deep raises ``RecursionError``; that, like any other parser
    failure, becomes ``UnreadableMail`` (a junk record with its reason, never a crash that
    every retry repeats).
    """
    try:
        return _from_mime(data)
    except RecursionError:
        raise UnreadableMail("unreadable_mail: multipart nested too deep") from None
    except (LookupError, ValueError, TypeError, IndexError, AttributeError, UnicodeError) as err:
        raise UnreadableMail(f"unreadable_mail: {type(err).__name__}") from None


def _from_mime(data: bytes) -> RawLead:
    """A raw RFC 5322 message as SES stored it.

    The sender (Reply-To first: form-notification mails put the lead there) is the lead's
    email and name; ``Label: value`` lines in the body fill the other fields; the body is the
    message. SES's own spam and virus verdicts and auto-reply markers become signals.
    """
    # The mail parser is imported here: the form lane (a public URL) never pays for it.
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    raw = RawLead()
    # Reply-To first; a Reply-To without a usable address (malformed) falls back to From.
    for header_name in ("Reply-To", "From"):
        try:
            sender_header = str(message.get(header_name) or "")
        except (ValueError, TypeError, IndexError):  # a header the parser cannot even render
            continue
        addresses = [(n, a) for n, a in getaddresses([sender_header]) if is_email(a.strip())]
        if addresses:
            name, address = addresses[0]
            raw.fields["email"] = address.strip()[:MAX_FIELD_CHARS]
            if name.strip():
                raw.fields["name"] = name.strip()[:MAX_FIELD_CHARS]
            break
    body = _body_text(message)
    for line in body.splitlines():
        match = _LABELLED_LINE.match(line)
        if match:
            key = alias_for(match.group(1))
            if key:
                raw.fields.setdefault(key, match.group(2)[:MAX_FIELD_CHARS])
    subject = str(message.get("Subject") or "").strip()
    raw.message = (f"{subject}\n\n{body}" if subject else body).strip()[:MAX_MESSAGE_CHARS]
    from_address = str(message.get("From") or "").lower()
    raw.signals.update(
        {
            "subject": subject[:200],
            "ses_spam_verdict": str(message.get("X-SES-Spam-Verdict") or ""),
            "ses_virus_verdict": str(message.get("X-SES-Virus-Verdict") or ""),
            "auto_submitted": str(message.get("Auto-Submitted") or "no").lower() != "no",
            "bulk": bool(message.get("List-Unsubscribe"))
            or str(message.get("Precedence") or "").lower() in {"bulk", "list", "junk"},
            "bounce": any(sender in from_address for sender in _BOUNCE_SENDERS),
            "url_count": count_urls(body),
        }
    )
    return raw


def _body_text(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError):
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    text = str(content)
    if part.get_content_subtype() == "html":
        text = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", text, flags=re.S | re.I)
        text = re.sub(r"<br\s*/?>|</p>|</div>", "\n", text, flags=re.I)
        text = re.sub(r"<[^>]+>", " ", text)
    return re.sub(r"[ \t]+", " ", text).strip()
