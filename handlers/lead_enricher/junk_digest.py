"""The junk digest (ler-digest): the previous day's ler-junk drops by reason, emailed via SES.

A human reads the boundary every morning: how many leads were dropped, why, and each dropped
lead (who, by which lane, the first words of the message) up to ``LISTED``, so a real lead
dropped by mistake is noticed. Each listed lead carries its rescue link (``rescue``), which
sends it back through the chain as not junk; a lead already rescued says by whom instead.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from handlers.common import degradations
from handlers.common import html_kit as kit
from handlers.common import quiet as quiet_rule
from handlers.common.html_kit import Mail, local_day
from handlers.common.metrics import CRM_REJECTED, MODEL_REFUSED
from handlers.common.observability import get_logger
from handlers.lead_enricher.contract import DEGRADABLE
from handlers.lead_enricher.junk_log import day_prefix
from handlers.lead_enricher.junk_words import (
    LANES,
    address_of,
    cut,
    name_of,
    reason_words,
    who,
    without_links,
)
from handlers.lead_enricher.mailer import Mailer
from handlers.lead_enricher.storage import ObjectStore

EFFECTS = {
    MODEL_REFUSED: "Leads are sorted by the fixed rules alone today: the AI check is unavailable.",
    CRM_REJECTED: "Some new leads are waiting to go into HubSpot, which asks for a field the form "
                  "does not fill. They are kept, and go in once that is fixed.",
}
"""What each fallback changes for the owner (``degradations.owner_lines``)."""

LISTED = 100
"""The digest lists this many dropped leads, each with its rescue link; the rest are counted."""
MAX_ENTRIES = 2000
"""A digest reads at most this many drops; the count says when there were more."""
MESSAGE_CHARS = 160


@dataclass(frozen=True)
class Sample:
    """One dropped lead as the owner reads it: who, from where, what they wrote, and either the
    link that rescues it or who already did."""

    who: str
    lane: str
    message: str
    name: str = ""
    rescue_url: str | None = None
    rescued: str = ""
    """"Rescued by ... on ..." once someone has."""

    def line(self) -> str:
        said = f': "{self.message}"' if self.message else ""
        return f"{self.who}, by {self.lane}{said}"

    @property
    def action(self) -> str:
        return f"Not junk: send {self.name or 'this lead'} to the CRM"


@dataclass
class Digest:
    day: dt.date
    total: int = 0
    by_reason: Counter[str] = field(default_factory=Counter)
    samples: dict[str, list[Sample]] = field(default_factory=lambda: defaultdict(list))
    truncated: bool = False
    degraded: list[degradations.Degradation] = field(default_factory=list)
    """Fallbacks noted since the digest's day began (a CRM refusal, a refused model)."""
    link_days: int = 0
    """How long the rescue links work (0: the digest carries none)."""
    alert_email: str = ""
    """Who has the fix of a fallback (``alertEmail``)."""

    @property
    def subject(self) -> str:
        leads = "lead" if self.total == 1 else "leads"
        subject = f"Lead enricher: {self.total} junk {leads} dropped on {local_day(self.day)}"
        return subject + (" (running on rules: see below)" if self.degraded else "")

    @property
    def listed(self) -> int:
        return sum(len(samples) for samples in self.samples.values())

    def _intro(self) -> str:
        if not self.total or not self.link_days:
            return ""
        days = "day" if self.link_days == 1 else "days"
        return (f"If one of these is a real lead, use its link: it goes through the lead "
                f"enricher again and into your CRM. The links work for {self.link_days} {days}.")

    def _unlisted(self) -> str:
        more = self.total - self.listed
        return f"{more} more not listed here; each is kept in the junk log." if more > 0 else ""

    def text(self) -> str:
        lines = [self.subject, ""]
        if self.degraded:
            lines += [*degradations.owner_lines(self.degraded, EFFECTS, self.alert_email), ""]
        if not self.total:
            lines.append("Nothing was dropped.")
        if self._intro():
            lines += [self._intro(), ""]
        for reason, count in self.by_reason.most_common():
            lines.append(f"{reason_words(reason)}: {count}")
            for sample in self.samples[reason]:
                lines.append(f"  - {sample.line()}")
                if sample.rescued:
                    lines.append(f"    {sample.rescued}")
                elif sample.rescue_url:
                    lines.append(f"    {sample.action}: {sample.rescue_url}")
        if self._unlisted():
            lines.append(self._unlisted())
        if self.truncated:
            lines.append(f"(only the first {MAX_ENTRIES} drops were read)")
        lines += ["", f"Detail: every dropped lead is kept in ler-junk under {day_prefix(self.day)}"]
        return "\n".join(lines)

    def mail(self) -> Mail:
        parts: list[str] = [degradations.owner_html(self.degraded, EFFECTS, self.alert_email)]
        if not self.total:
            parts.append(kit.para("Nothing was dropped."))
        if self._intro():
            parts.append(kit.para(self._intro()))
        for reason, count in self.by_reason.most_common():
            parts.append(f"<h2>{kit.esc(reason_words(reason))}: {count}</h2><ul>")
            for sample in self.samples[reason]:
                said = f"<br>&ldquo;{kit.esc(sample.message)}&rdquo;" if sample.message else ""
                act = ""
                if sample.rescued:
                    act = f"<br><em>{kit.esc(sample.rescued)}</em>"
                elif sample.rescue_url:
                    act = f"<br>{kit.link(sample.rescue_url, sample.action)}"
                # Room between leads: a thumb taps one lead's link, not the next one's.
                parts.append(f"<li style='margin:0 0 16px'><strong>{kit.esc(sample.who)}</strong>, "
                             f"by {kit.esc(sample.lane)}{said}{act}</li>")
            parts.append("</ul>")
        if self._unlisted():
            parts.append(kit.para(self._unlisted()))
        if self.truncated:
            parts.append(kit.para(f"Only the first {MAX_ENTRIES} drops were read."))
        parts.append(kit.detail(f"Every dropped lead is kept in ler-junk under {day_prefix(self.day)}"))
        return Mail(self.subject, self.text(), kit.document(
            self.subject, kit.Html(f"<h1>{kit.esc(self.subject)}</h1>{''.join(parts)}")))


@dataclass(frozen=True)
class RescueLinks:
    """How the digest links each lead to ler-rescue: ``link(junk key)`` and how long it works."""

    link: Callable[[str], str]
    days: int
    zone: str


def _sample(key: str, entry: dict[str, Any], links: RescueLinks | None) -> Sample:
    lead = entry.get("lead") if isinstance(entry.get("lead"), dict) else {}
    assert isinstance(lead, dict)
    lane = str(entry.get("lane") or "?")
    rescued = ""
    done = entry.get("rescue")
    if isinstance(done, dict):
        when = str(done.get("at") or "")
        if links is not None and when:
            when = kit.local_time(dt.datetime.fromisoformat(when), links.zone)
        rescued = f"Rescued by {done.get('by') or 'someone'} on {when}"
    return Sample(
        who(lead), LANES.get(lane, lane),
        cut(without_links(str(lead.get("message") or "")), MESSAGE_CHARS),
        name=name_of(lead) or address_of(lead),
        rescue_url=links.link(key) if links is not None and not rescued else None,
        rescued=rescued,
    )


def summarise(
    day: dt.date,
    entries: Iterable[tuple[str, dict[str, Any]]],
    truncated: bool = False,
    links: RescueLinks | None = None,
) -> Digest:
    """The digest of one day's (junk key, entry) pairs; ``links`` gives each listed lead its
    rescue link (None: no links)."""
    digest = Digest(day=day, truncated=truncated, link_days=links.days if links else 0)
    for key, entry in entries:
        reason = str(entry.get("reason") or "unknown")
        digest.total += 1
        digest.by_reason[reason] += 1
        if digest.listed < LISTED:
            digest.samples[reason].append(_sample(key, entry, links))
    return digest


def run_digest(
    store: ObjectStore,
    mailer: Mailer,
    *,
    bucket: str,
    recipient: str,
    today: dt.date,
    links: RescueLinks | None = None,
    ledger: degradations.Ledger | None = None,
    alert_email: str = "",
    quiet: str = quiet_rule.LINE,
) -> Digest:
    """Mail the owner yesterday's digest, unless it has nothing to say (``quiet_rule``); a
    fallback taken also mails its fix to ``alert_email``."""
    day = today - dt.timedelta(days=1)
    keys = list(store.keys(bucket, day_prefix(day)))
    entries = ((key, store.get_json(bucket, key)) for key in keys[:MAX_ENTRIES])
    digest = summarise(day, entries, truncated=len(keys) > MAX_ENTRIES, links=links)
    if ledger is not None:
        since = dt.datetime.combine(day, dt.time(), dt.UTC).timestamp()
        digest.degraded = ledger.seen(DEGRADABLE, since)
    digest.alert_email = alert_email
    if digest.degraded and ledger is not None:
        region = str(ledger.table.meta.client.meta.region_name)  # ler's one Region
        fix = degradations.deployer_mail(digest.degraded, system="Lead enricher", region=region)
        mailer.send(alert_email, fix.subject, fix.text, html=fix.html)
    if not digest.total and not digest.degraded:
        if not quiet_rule.all_quiet_due(today, quiet):
            get_logger().info("nothing dropped: no digest", day=day.isoformat())
            return digest
        line = quiet_rule.all_quiet("Lead enricher", f"No junk lead was dropped on {local_day(day)}.")
        mailer.send(recipient, line.subject, line.text, html=line.html)
        return digest
    mail = digest.mail()
    mailer.send(recipient, mail.subject, mail.text, html=mail.html)
    get_logger().info("junk digest sent", day=day.isoformat(), total=digest.total,
                      listed=digest.listed)
    return digest
