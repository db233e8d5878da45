"""What rrs-sender does with one due request: re-check, grade, compose, claim, send, record.

Once-only rests on one conditional write: the request moves ``scheduled`` -> ``asked`` /
``diverted`` / ``suppressed`` in a transaction that also appends the grade and the message to
the audit and checks that none of the customer's contacts is on rrs-optout, and only the call
that wins it sends. An opt-out stored while the models run therefore still stops the ask. A duplicate SQS delivery, or the copy the sweep
enqueued for the same request, loses that write and sends nothing. If the send itself fails the
claim is released (only by its holder) so the SQS retry can send; an SMS refused because the
customer replied STOP to the carrier is recorded as suppressed. A send the provider accepted
stamps the claim ``delivered_at``; one that never does is reported by rrs-sweep, never re-sent
(``handlers.common.unconfirmed_sends``).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from handlers.common import metrics
from handlers.common.link_tokens import Keyring, issue_short_token
from handlers.common.model_call import ConverseClient
from handlers.common.spend import CapReached, SpendGuard
from handlers.review_requests import drafting, grading
from handlers.review_requests.domain import (
    FEEDBACK_ACTION,
    Band,
    Channel,
    Purpose,
    Signal,
    State,
    escalate_message,
    purpose_for,
    ref_subject,
)
from handlers.review_requests.messaging import Messenger, OptedOutAtCarrier, Outgoing
from handlers.review_requests.store import Audit, AuditEntry, OptOuts, Requests, finish_with_audit
from handlers.review_requests.timing import Window, iso, parse_iso, zone
from handlers.review_requests.work import WorkQueue

CHECK_REASON = "check"
"""Why a ``make verify`` request ends suppressed: counted in no business metric."""
EARLY_TOLERANCE = dt.timedelta(minutes=5)
"""A send message this much before the request's due time is ignored (nothing is written)."""


class LinkLeak(AssertionError):
    """A message about to go out would point a customer not graded happy at the review page."""


@dataclass(frozen=True)
class SendConfig:
    """Settings of the send path.

    Attributes:
        grade_model_id: Model of the grade call.
        compose_model_id: Model of the compose call.
        review_url: The public review page (happy customers only).
        feedback_url: The private feedback form (everyone else).
        business: The business's name, told to the compose call.
        window: Opening hours, read in the customer's time zone.
        business_timezone: Zone used when the request has none.
        link_ttl: Lifetime of the feedback link's ref token.
    """

    grade_model_id: str
    compose_model_id: str
    review_url: str
    feedback_url: str
    business: str
    window: Window
    business_timezone: str
    link_ttl: dt.timedelta


def feedback_link(base: str, token: str) -> str:
    """The feedback form URL with the signed ref appended."""
    joiner = "&" if "?" in base else "?"
    return f"{base}{joiner}ref={token}"


def feedback_ref(keyring: Keyring, request_id: str, ttl: dt.timedelta, now: dt.datetime) -> str:
    """The feedback link's ref: a short token (49 characters, where a full one takes
    over 150), so the whole link a customer sees stays under 100 characters."""
    return issue_short_token(
        keyring,
        subject=ref_subject(request_id),
        action=FEEDBACK_ACTION,
        ttl_seconds=int(ttl.total_seconds()),
        now=now.timestamp(),
    )


@dataclass
class Sender:
    """rrs-sender's flow over its adapters; ``bedrock`` None means the real client; ``spend``
    holds the day's SMS counter (``dailySms``), None where no SMS cap applies (tests of the
    other steps)."""

    requests: Requests
    optouts: OptOuts
    audit: Audit
    messenger: Messenger
    work: WorkQueue
    keyring: Callable[[], Keyring]
    config: SendConfig
    bedrock: ConverseClient | None = None
    spend: SpendGuard | None = None

    def process(self, request_id: str, now: dt.datetime, claim: str | None = None) -> str:
        """Handle one send message; returns the outcome (for logs and tests)."""
        item = self.requests.get(request_id)
        if item is None:
            return "missing"
        if item.get("state") != State.SCHEDULED.value:
            return f"already_{item.get('state')}"
        if item.get("check"):
            # make verify's request: it proved the path to here; nobody is asked.
            return self._suppress(request_id, CHECK_REASON, {}, now)
        contacts = [str(c) for c in item.get("contacts") or [item.get("contact")] if c]
        opted_out = self.optouts.first_opted_out(contacts)
        if opted_out is not None:
            return self._suppress(request_id, "opted_out", {"contact": opted_out}, now)
        due = item.get("due")
        if due and parse_iso(str(due)) - now > EARLY_TOLERANCE:
            return "early"  # a stray copy: the schedule or the sweep delivers at the due time
        tz = zone(item.get("timezone"), self.config.business_timezone)
        if not self.config.window.contains(now, tz):
            return self._defer(request_id, self.config.window.next_open(now, tz), tz.key, now)
        if self.spend is not None and item.get("channel") == Channel.SMS.value:
            try:
                self.spend.reserve("sms")  # before the models: a deferred ask costs no call
            except CapReached as capped:
                return self._defer(request_id, capped.resume_at, tz.key, now, reason="sms_cap")
        return self._ask(item, now, claim or uuid.uuid4().hex)

    # Outcomes -----------------------------------------------------------------------------

    def _suppress(
        self, request_id: str, reason: str, facts: dict[str, Any], now: dt.datetime
    ) -> str:
        won = finish_with_audit(
            self.requests,
            self.audit,
            request_id=request_id,
            new_state=State.SUPPRESSED,
            updates={"suppressed_reason": reason, "finished_at": iso(now)},
            entries=(AuditEntry.now(request_id, "suppressed", {"reason": reason, **facts}, now),),
        )
        if won and reason != CHECK_REASON:  # make verify's request is not business
            metrics.count("Requests", 1, State.SUPPRESSED.value)
        return "suppressed" if won else "lost_race"

    def _defer(
        self, request_id: str, until: dt.datetime, tz_name: str, now: dt.datetime,
        reason: str = "quiet_hours",
    ) -> str:
        """Quiet hours where the customer is, or the day's SMS spent: move the due time; the
        sweep re-drives it."""
        if not self.requests.defer(request_id, iso(until), iso(now)):
            return "lost_race"
        self.audit.append(
            AuditEntry.now(
                request_id,
                "deferred",
                {"reason": reason, "until": iso(until), "timezone": tz_name},
                now,
            )
        )
        return "deferred"

    def _ask(self, item: dict[str, Any], now: dt.datetime, claim: str) -> str:
        cfg = self.config
        request_id = str(item["request_id"])
        signal = Signal.from_item(item.get("signal"))
        job_title = str(item.get("job_title", ""))
        grade = grading.grade(signal, job_title, model_id=cfg.grade_model_id, client=self.bedrock)
        purpose = purpose_for(grade.band)
        channel = Channel(str(item["channel"]))
        request = drafting.DraftRequest(
            first_name=str(item.get("first_name", "")),
            business=cfg.business,
            job=drafting.safe_job_label(job_title),
            channel=channel,
            purpose=purpose,
        )
        draft = drafting.compose(request, model_id=cfg.compose_model_id, client=self.bedrock)
        link = (
            cfg.review_url
            if purpose is Purpose.REVIEW
            else feedback_link(cfg.feedback_url, self._ref(request_id, now))
        )
        subject, text, html = drafting.finish(draft, request, link)
        if purpose is not Purpose.REVIEW and cfg.review_url in f"{subject}\n{text}":
            raise LinkLeak(f"request {request_id}: review link in a {grade.band} ask")
        if grade.band is Band.UNHAPPY:
            # Before the claim: if this delivery loses, the winner escalates the same key.
            self.work.put(escalate_message(request_id, "unhappy_grade", "unhappy-grade"))
        new_state = State.ASKED if purpose is Purpose.REVIEW else State.DIVERTED
        to = str(item["contact"])
        contacts = [str(c) for c in (*(item.get("contacts") or ()), to) if c]
        won = finish_with_audit(
            self.requests,
            self.audit,
            request_id=request_id,
            new_state=new_state,
            updates={
                "band": grade.band.value,
                "grade_source": grade.source,
                "purpose": purpose.value,
                "draft_source": draft.source,
                "sent_at": iso(now),
                "finished_at": iso(now),
                "claim": claim,
            },
            entries=(
                AuditEntry.now(
                    request_id,
                    "grade",
                    {
                        **grade.facts(),
                        "facts_given": grading.grade_facts(signal, job_title),
                        "signal": signal.as_item(),
                    },
                    now,
                    step=1,
                ),
                AuditEntry.now(
                    request_id,
                    "message",
                    {
                        "channel": channel.value,
                        "to": to,
                        "purpose": purpose.value,
                        "link": link,
                        "subject": subject,
                        "text": text,
                        "draft_source": draft.source,
                        "rejected": list(draft.rejected),
                        "model_id": draft.model_id,
                        "facts_given": request.facts(),
                        "band": grade.band.value,
                    },
                    now,
                    step=2,
                ),
            ),
            not_opted_out=(self.optouts, contacts),
        )
        if won.opted_out is not None:
            # The customer opted out after the first check: the opt-out wins over the claim.
            return self._suppress(request_id, "opted_out", {"contact": won.opted_out}, now)
        if not won:
            return "lost_race"
        try:
            message_id = self.messenger.send(Outgoing(channel, to, text, subject, html))
        except OptedOutAtCarrier:
            self.requests.correct_to_suppressed(
                request_id, new_state.value, claim, "opted_out_at_carrier", iso(now)
            )
            self.audit.append(
                AuditEntry.now(
                    request_id, "suppressed", {"reason": "opted_out_at_carrier"}, now, step=3
                )
            )
            metrics.count("Requests", 1, State.SUPPRESSED.value)
            return "suppressed"
        except Exception as err:
            self.requests.release_claim(request_id, new_state.value, claim, iso(now))
            self.audit.append(
                AuditEntry.now(
                    request_id,
                    "send_failed",
                    {"error": type(err).__name__, "claim": claim},
                    now,
                    step=3,
                )
            )
            raise
        self.requests.confirm_delivery(request_id, new_state.value, claim, message_id, iso(now))
        self.audit.append(
            AuditEntry.now(
                request_id,
                "delivered",
                {"provider_message_id": message_id, "channel": channel.value},
                now,
                step=3,
            )
        )
        metrics.count("Requests", 1, new_state.value)
        metrics.count("Asks", 1, channel.value)
        return new_state.value

    def _ref(self, request_id: str, now: dt.datetime) -> str:
        return feedback_ref(self.keyring(), request_id, self.config.link_ttl, now)
