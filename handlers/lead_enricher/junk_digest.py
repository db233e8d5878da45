"""The junk digest (ler-digest): the previous day's ler-junk drops by reason, emailed via SES.

A human reads the boundary every morning: how many leads were dropped, why, and a short
sample of each reason (lane, address, the first words of the message), so a real lead
dropped by mistake is noticed and can be replayed from ler-junk.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from handlers.common import degradations
from handlers.common import html_kit as kit
from handlers.common.html_kit import Mail, local_day
from handlers.common.observability import get_logger
from handlers.lead_enricher.contract import DEGRADABLE
from handlers.lead_enricher.junk_log import day_prefix
from handlers.lead_enricher.mailer import Mailer
from handlers.lead_enricher.storage import ObjectStore

SAMPLES_PER_REASON = 5
MAX_ENTRIES = 2000
"""A digest reads at most this many drops; the count says when there were more."""


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
MESSAGE_CHARS = 160


def reason_words(code: str) -> str:
    words = REASONS.get(code, code.replace("_", " "))
    return f"{words[:1].upper()}{words[1:]} ({code})"


@dataclass(frozen=True)
class Sample:
    """One dropped lead as the owner reads it: who, from where, and what they wrote."""

    who: str
    lane: str
    message: str

    def line(self) -> str:
        said = f': "{self.message}"' if self.message else ""
        return f"{self.who}, by {self.lane}{said}"


@dataclass
class Digest:
    day: dt.date
    total: int = 0
    by_reason: Counter[str] = field(default_factory=Counter)
    samples: dict[str, list[Sample]] = field(default_factory=lambda: defaultdict(list))
    truncated: bool = False
    degraded: list[degradations.Degradation] = field(default_factory=list)
    """Fallbacks noted since the digest's day began (a CRM refusal, a refused model)."""

    @property
    def subject(self) -> str:
        leads = "lead" if self.total == 1 else "leads"
        subject = f"Lead enricher: {self.total} junk {leads} dropped on {local_day(self.day)}"
        return subject + (" (running degraded: see below)" if self.degraded else "")

    def text(self) -> str:
        lines = [self.subject, ""]
        if self.degraded:
            lines += [*degradations.text_lines(self.degraded), ""]
        if not self.total:
            lines.append("Nothing was dropped.")
        for reason, count in self.by_reason.most_common():
            lines.append(f"{reason_words(reason)}: {count}")
            lines.extend(f"  - {sample.line()}" for sample in self.samples[reason])
        if self.truncated:
            lines.append(f"(only the first {MAX_ENTRIES} drops were read)")
        lines += ["", f"Detail: every dropped lead is kept in ler-junk under {day_prefix(self.day)}"]
        return "\n".join(lines)

    def mail(self) -> Mail:
        parts: list[str] = [degradations.html(self.degraded)]
        if not self.total:
            parts.append(kit.para("Nothing was dropped."))
        for reason, count in self.by_reason.most_common():
            parts.append(f"<h2>{kit.esc(reason_words(reason))}: {count}</h2><ul>")
            for sample in self.samples[reason]:
                said = f"<br>&ldquo;{kit.esc(sample.message)}&rdquo;" if sample.message else ""
                parts.append(f"<li><strong>{kit.esc(sample.who)}</strong>, by {kit.esc(sample.lane)}{said}</li>")
            parts.append("</ul>")
        if self.truncated:
            parts.append(kit.para(f"Only the first {MAX_ENTRIES} drops were read."))
        parts.append(kit.detail(f"Every dropped lead is kept in ler-junk under {day_prefix(self.day)}"))
        return Mail(self.subject, self.text(), kit.document(
            self.subject, kit.Html(f"<h1>{kit.esc(self.subject)}</h1>{''.join(parts)}")))


def _words(text: str, limit: int) -> str:
    """``text`` whole, or cut at a word boundary with "..." when longer than ``limit``."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0].rstrip(",.;:") + "..."


def _sample(entry: dict[str, Any]) -> Sample:
    lead = entry.get("lead") or {}
    contact = lead.get("contact") or {}
    fields = lead.get("fields") or {}
    who = contact.get("email") or fields.get("email") or fields.get("phone") or "(no address)"
    lane = str(entry.get("lane") or "?")
    return Sample(str(who), LANES.get(lane, lane), _words(str(lead.get("message") or ""), MESSAGE_CHARS))


def summarise(day: dt.date, entries: Iterable[dict[str, Any]], truncated: bool = False) -> Digest:
    digest = Digest(day=day, truncated=truncated)
    for entry in entries:
        reason = str(entry.get("reason") or "unknown")
        digest.total += 1
        digest.by_reason[reason] += 1
        if len(digest.samples[reason]) < SAMPLES_PER_REASON:
            digest.samples[reason].append(_sample(entry))
    return digest


def run_digest(
    store: ObjectStore,
    mailer: Mailer,
    *,
    bucket: str,
    recipient: str,
    today: dt.date,
    ledger: degradations.Ledger | None = None,
) -> Digest:
    day = today - dt.timedelta(days=1)
    keys = list(store.keys(bucket, day_prefix(day)))
    entries = (store.get_json(bucket, key) for key in keys[:MAX_ENTRIES])
    digest = summarise(day, entries, truncated=len(keys) > MAX_ENTRIES)
    if ledger is not None:
        since = dt.datetime.combine(day, dt.time(), dt.UTC).timestamp()
        digest.degraded = ledger.seen(DEGRADABLE, since)
    mail = digest.mail()
    mailer.send(recipient, mail.subject, mail.text, html=mail.html)
    get_logger().info("junk digest sent", day=day.isoformat(), total=digest.total)
    return digest
