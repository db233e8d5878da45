"""The lead as it travels: one JSON shape from intake to push, extended stage by stage.

Every stage reads the lead from its trigger, adds its own section and passes the whole lead
on, so the event a stage receives is self-contained and a re-driven event replays exactly.
``lead_id`` is derived from the input (payload hash, S3 key, CSV row), which is what makes a
redelivered input the same lead, and ``pass_no`` counts enrichment passes: a pending lead
re-enters the chain with the next pass, and push acts at most once per (lead, pass).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

Lane = Literal["form", "mail", "upload"]
CHECK_SIGNAL = "check"
"""The signal that marks ``make verify``'s lead (``Lead.is_check``)."""
MAX_MESSAGE_CHARS = 2000
"""A lead's free text is cut here: an EventBridge event is at most 256 KB."""


def lead_id_for(lane: Lane, *parts: str) -> str:
    """A stable id from the lane and what identifies the input (hash, key, row)."""
    digest = hashlib.sha256("\x1f".join((lane, *parts)).encode("utf-8")).hexdigest()
    return f"{lane[0]}-{digest[:24]}"


@dataclass
class Contact:
    """The person after deterministic cleanup (and bounded model help)."""

    email: str | None = None
    phone: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    company: str | None = None
    country: str | None = None
    job_title: str | None = None
    website: str | None = None

    @property
    def full_name(self) -> str:
        return " ".join(p for p in (self.first_name, self.last_name) if p)

    @property
    def email_domain(self) -> str | None:
        if not self.email or "@" not in self.email:
            return None
        return self.email.rpartition("@")[2]


@dataclass
class Enrichment:
    """What ler-enrich found; each firmographic field carries its source and date."""

    status: Literal["enriched", "not_found", "skipped", "pending"] = "skipped"
    domain: str | None = None
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    reason: str | None = None


@dataclass
class Dedupe:
    """ler-dedupe's verdict: ``new`` or ``link:<crm_id>``, and why."""

    verdict: str = "new"
    matched_on: str | None = None
    score: float | None = None
    model: str | None = None

    @property
    def crm_id(self) -> str | None:
        return self.verdict.removeprefix("link:") if self.verdict.startswith("link:") else None


@dataclass
class Screening:
    """ler-filter's decision (or intake's pre-screen): clean or junk, with the reason."""

    decision: Literal["clean", "junk"] = "clean"
    reason: str = ""
    score: float = 0.0
    signals: list[str] = field(default_factory=list)
    stage: str = "filter"
    model: str | None = None


@dataclass
class Rescue:
    """A person sent this dropped lead back from the junk digest: ler-filter keeps it."""

    by: str
    at: str
    """ISO 8601, UTC."""


@dataclass
class Lead:
    """One lead, from any lane."""

    lead_id: str
    lane: Lane
    received_at: str
    raw: dict[str, str] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)
    message: str = ""
    signals: dict[str, Any] = field(default_factory=dict)
    contact: Contact | None = None
    normalize: dict[str, Any] = field(default_factory=dict)
    enrichment: Enrichment | None = None
    dedupe: Dedupe | None = None
    screening: Screening | None = None
    pass_no: int = 0
    redrives: int = 0
    rescue: Rescue | None = None

    @property
    def is_check(self) -> bool:
        """``make verify``'s synthetic lead: it travels the whole chain doing each stage's
        real work, but no stage lets it reach a person, a paid call or a business metric.
        The one place the mark is read; ``mark_check`` the one place it is set."""
        return self.signals.get(CHECK_SIGNAL) is True

    def mark_check(self) -> None:
        """Mark this lead as ``make verify``'s (ler-intake, once the request proved authentic)."""
        self.signals[CHECK_SIGNAL] = True

    def to_json(self) -> dict[str, Any]:
        """The wire form (plain JSON types)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Lead:
        """Rebuild a lead from its wire form; unknown keys are ignored (newer writers)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name, kind in (
            ("contact", Contact),
            ("enrichment", Enrichment),
            ("dedupe", Dedupe),
            ("screening", Screening),
            ("rescue", Rescue),
        ):
            if isinstance(values.get(name), dict):
                values[name] = _build(kind, values[name])
        if "lead_id" not in values or "lane" not in values:
            raise ValueError("a lead needs lead_id and lane")
        lead = cls(**values)
        lead.message = lead.message[:MAX_MESSAGE_CHARS]
        return lead


def _build(kind: type[Any], data: dict[str, Any]) -> Any:
    known = {f.name for f in fields(kind)}
    return kind(**{k: v for k, v in data.items() if k in known})
