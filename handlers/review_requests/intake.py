"""What rrs-webhook does with an authentic event: completion, private feedback, opt-out.

Nothing slow happens here. A completion becomes exactly one request (the conditional put keyed
by the completion id), one job record, one intake audit entry and, when eligible, one schedule
named from the request id. Everything is checked against DynamoDB's limits before the request
row (the marker) is written; after it, every step is idempotent and re-run by a redelivery, so
three deliveries still leave one of each, and a delivery that died after the marker is
finished by the next. Private feedback is appended to the audit under a key derived from
the event, and an escalation is enqueued (the escalator de-duplicates). An opt-out is recorded.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from handlers.common import metrics
from handlers.common.dynamo_limits import Unstorable, bounded_payload, check_item
from handlers.common.function_url import RequestError
from handlers.common.link_tokens import (
    Keyring,
    LinkClaims,
    TokenError,
    verify_short_token,
    verify_token,
)
from handlers.review_requests.contacts import InvalidContact, normalise_contact
from handlers.review_requests.contract import JOBS_TTL, REQUESTS_TTL
from handlers.review_requests.domain import (
    FEEDBACK_ACTION,
    State,
    escalate_message,
    request_id_for,
    request_id_of,
)
from handlers.review_requests.events import Completion, Feedback, OptOut
from handlers.review_requests.gate import capture_signal, decide, merge_customer
from handlers.review_requests.scheduling import RequestScheduler
from handlers.review_requests.store import (
    Audit,
    AuditEntry,
    Customers,
    Jobs,
    OptOuts,
    Requests,
    dynamo_safe,
)
from handlers.review_requests.timing import (
    MIN_LEAD,
    Window,
    due_time,
    iso,
    iso_micro,
    parse_iso,
    zone,
)
from handlers.review_requests.work import WorkQueue

MAX_RAW_PAYLOAD_BYTES = 16 * 1024
"""The most of the tool's raw completion event kept on the job record."""


@dataclass(frozen=True)
class IntakeConfig:
    """Settings of the door.

    Attributes:
        delay: From completion to the ask (before moving into opening hours).
        window: Opening hours, read in the customer's time zone.
        business_timezone: Zone used when the customer has none.
        phone_region: Country for national phone numbers.
        retention_days: Lifetime of a request item (TTL).
    """

    delay: dt.timedelta
    window: Window
    business_timezone: str
    phone_region: str
    retention_days: int


@dataclass
class Intake:
    """The webhook's flows over its adapters."""

    requests: Requests
    jobs: Jobs
    customers: Customers
    optouts: OptOuts
    audit: Audit
    scheduler: RequestScheduler
    work: WorkQueue
    keyring: Callable[[], Keyring]
    config: IntakeConfig

    def completion(self, event: Completion, now: dt.datetime, *, check: bool = False) -> dict[str, Any]:
        """One request per completion, its job, and (if eligible) its schedule. A ``check``
        (make verify) writes the same rows and schedule, marked ``check`` with a one-day TTL;
        the sender never sends a check request, and make verify deletes what it wrote."""
        cfg = self.config
        request_id = request_id_for(event.completion_id)
        customer = merge_customer(
            event.customer_id,
            self.customers.get(event.customer_id),
            event.customer,
            cfg.phone_region,
        )
        opted_out = self.optouts.first_opted_out(customer.contacts)
        decision = decide(customer, opted_out=opted_out, completed_at=event.completed_at, now=now)
        signal = capture_signal(event.signal, customer)
        tz = zone(customer.timezone, cfg.business_timezone)
        job_ts = f"{iso(event.completed_at)}#{event.completion_id}"
        item: dict[str, Any] = {
            "request_id": request_id,
            "completion_id": event.completion_id,
            "customer_id": event.customer_id,
            "job_ts": job_ts,
            "job_title": event.job_title,
            "first_name": customer.first_name,
            "customer_name": customer.name,
            "contacts": list(customer.contacts),
            "timezone": tz.key,
            "signal": signal.as_item(),
            "created_at": iso(now),
            REQUESTS_TTL: int((now + dt.timedelta(days=1 if check else cfg.retention_days)).timestamp()),
        }
        if check:
            item["check"] = True
        if decision.eligible:
            assert decision.channel is not None and decision.contact is not None
            due = due_time(event.completed_at, delay=cfg.delay, window=cfg.window, tz=tz, now=now)
            item.update(
                state=State.SCHEDULED.value,
                due=iso(due),
                channel=decision.channel.value,
                contact=decision.contact,
            )
        else:
            item.update(
                state=State.SUPPRESSED.value,
                suppressed_reason=",".join(decision.reasons),
                finished_at=iso(now),
            )
        item["intake_ts"] = iso_micro(now)
        job = {
            "customer_id": event.customer_id,
            "job_ts": job_ts,
            "completion_id": event.completion_id,
            "request_id": request_id,
            "job_id": event.job_id,
            "job_title": event.job_title,
            "completed_at": iso(event.completed_at),
            "signal": signal.as_item(),
            # The tool's raw event, bounded: a map when small and storable, else cut JSON text.
            **bounded_payload(event.raw, max_bytes=MAX_RAW_PAYLOAD_BYTES),
            "recorded_at": iso(now),
            JOBS_TTL: item[REQUESTS_TTL],  # the job lives as long as its request
            **({"check": True} if check else {}),
        }
        facts = {
            "reasons": list(decision.reasons),
            "opted_out_contact": opted_out,
            "completion_event_id": event.event_id,
        }
        # Everything this delivery writes is checked against DynamoDB's limits before the
        # first write: an event that can never be stored is a 422 that wrote nothing, not a
        # request row followed by a failure on every redelivery.
        try:
            for candidate in (item, job, self._intake_audit(item, facts).item(cfg.retention_days)):
                check_item(dynamo_safe(candidate))
        except Unstorable as err:
            raise RequestError(422, "unstorable_event", f"the event cannot be stored: {err}") from err
        created = self.requests.create(item)
        if created.won and item["state"] == State.SUPPRESSED.value and not check:
            # make verify's job proves the path; it is not business.
            metrics.count("Requests", 1, State.SUPPRESSED.value)
        current = item if created.won else dict(created.existing or item)
        # Every step after the marker is idempotent and runs on every delivery, so a delivery
        # that died after the marker is finished by the next one: the job record (first
        # writer wins), the schedule (named from the request id) and the intake audit entry
        # (keyed by the first delivery's intake time).
        self.jobs.record(job)
        schedule_created = False
        if current.get("state") == State.SCHEDULED.value and current.get("due"):
            # A due time already past means the schedule fired (and deleted itself); the
            # sweep covers a request whose schedule never existed.
            due_at = parse_iso(str(current["due"]))
            if due_at > now + MIN_LEAD / 4:
                schedule_created = self.scheduler.ensure(request_id, due_at)
        self.audit.append(self._intake_audit(current, facts if created.won else {"redelivered": True}))
        return {
            "request_id": request_id,
            "state": current.get("state"),
            "due": current.get("due"),
            "duplicate": not created.won,
            "schedule_created": schedule_created,
        }

    @staticmethod
    def _intake_audit(request: Mapping[str, Any], facts: Mapping[str, Any]) -> AuditEntry:
        """The request's one intake entry, keyed by its first delivery's time, with the facts
        the stored request carries (so a redelivery writes the same entry, once)."""
        moment = str(request.get("intake_ts") or request.get("created_at") or "")
        return AuditEntry(
            str(request["request_id"]),
            f"{moment}#00-intake",
            "intake",
            {
                "state": request.get("state"),
                "channel": request.get("channel"),
                "due": request.get("due"),
                "timezone": request.get("timezone"),
                "signal": request.get("signal"),
                **facts,
            },
            str(request.get("created_at") or ""),
        )

    def feedback(self, event: Feedback, now: dt.datetime) -> dict[str, Any]:
        """Append the feedback to the request's audit and enqueue an escalation."""
        try:
            request_id = self._ref_request(event.ref, now)
        except TokenError as err:
            raise RequestError(
                400,
                "invalid_reference",
                f"the feedback reference is not valid ({err.reason.value})",
            ) from err
        request = self.requests.get(request_id)
        if request is None:
            raise RequestError(404, "unknown_request", "no review request matches the reference")
        submitted = event.submitted_at or now
        self.audit.append(
            AuditEntry(
                request_id,
                f"{iso_micro(submitted)}#feedback#{event.event_id}",
                "feedback",
                {
                    "text": event.text,
                    "rating": event.rating,
                    "event_id": event.event_id,
                    "customer_id": request.get("customer_id"),
                    "submitted_at": iso(submitted),
                },
                iso(now),
            )
        )
        # Always enqueue, also on a redelivery: the first one may have died before this line.
        self.work.put(
            escalate_message(request_id, "private_feedback", f"feedback-{event.event_id}")
        )
        return {"request_id": request_id, "escalation": "queued"}

    def _ref_request(self, ref: str, now: dt.datetime) -> str:
        """The request a feedback ref names: a short token, or (an ask sent before short refs,
        valid up to ``linkTtlDays``) a full ``v1.`` token whose subject is the request id."""
        if ref.startswith("v1."):
            claims: LinkClaims = verify_token(ref, self.keyring(), action=FEEDBACK_ACTION, now=now.timestamp())
            return claims.subject
        claims = verify_short_token(ref, self.keyring(), action=FEEDBACK_ACTION, now=now.timestamp())
        return request_id_of(claims.subject)

    def opt_out(self, event: OptOut, now: dt.datetime) -> dict[str, Any]:
        """Record the contact on the suppression list (the first opt-out is kept)."""
        try:
            contact = normalise_contact(event.contact, self.config.phone_region)
        except InvalidContact as err:
            raise RequestError(400, "invalid_contact", str(err)) from err
        added = self.optouts.record(
            contact, source=event.source, event_id=event.event_id, at=iso(now)
        )
        return {"opted_out": True, "already_opted_out": not added}
