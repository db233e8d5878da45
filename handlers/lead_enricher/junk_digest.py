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

from handlers.common.observability import get_logger
from handlers.lead_enricher.junk_log import day_prefix
from handlers.lead_enricher.mailer import Mailer
from handlers.lead_enricher.storage import ObjectStore

SAMPLES_PER_REASON = 5
MAX_ENTRIES = 2000
"""A digest reads at most this many drops; the count says when there were more."""


@dataclass
class Digest:
    day: dt.date
    total: int = 0
    by_reason: Counter[str] = field(default_factory=Counter)
    samples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    truncated: bool = False

    @property
    def subject(self) -> str:
        return f"Lead enricher: {self.total} junk lead(s) dropped on {self.day.isoformat()}"

    def text(self) -> str:
        lines = [self.subject, ""]
        if not self.total:
            lines.append("Nothing was dropped.")
        for reason, count in self.by_reason.most_common():
            lines.append(f"{reason}: {count}")
            lines.extend(f"  - {sample}" for sample in self.samples[reason])
        if self.truncated:
            lines.append(f"(only the first {MAX_ENTRIES} drops were read)")
        lines += ["", "Every dropped lead is kept in ler-junk under " + day_prefix(self.day)]
        return "\n".join(lines)


def _sample(entry: dict[str, Any]) -> str:
    lead = entry.get("lead") or {}
    contact = lead.get("contact") or {}
    fields = lead.get("fields") or {}
    who = contact.get("email") or fields.get("email") or fields.get("phone") or "(no address)"
    words = " ".join(str(lead.get("message") or "").split())[:80]
    return f"[{entry.get('lane', '?')}/{entry.get('stage', '?')}] {who}: {words}"


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
) -> Digest:
    day = today - dt.timedelta(days=1)
    keys = list(store.keys(bucket, day_prefix(day)))
    entries = (store.get_json(bucket, key) for key in keys[:MAX_ENTRIES])
    digest = summarise(day, entries, truncated=len(keys) > MAX_ENTRIES)
    mailer.send(recipient, digest.subject, digest.text())
    get_logger().info("junk digest sent", day=day.isoformat(), total=digest.total)
    return digest
