"""What rrs-escalator does with one escalation: claim it once, build the handover, email it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from handlers.common import metrics
from handlers.review_requests import handover
from handlers.review_requests.domain import Channel, State
from handlers.review_requests.messaging import Messenger, Outgoing
from handlers.review_requests.store import Audit, AuditEntry, Customers, Jobs, Requests
from handlers.review_requests.timing import iso


@dataclass
class Escalator:
    """The escalation flow over its adapters."""

    requests: Requests
    customers: Customers
    jobs: Jobs
    audit: Audit
    messenger: Messenger
    owner_email: str
    business: str
    lease: dt.timedelta
    zone: str = "UTC"
    """The business's IANA zone (``opening_timezone``): the handover's times are in it."""

    def process(self, request_id: str, reason: str, dedupe_key: str, now: dt.datetime) -> str:
        """Handle one escalate message; returns the outcome (for logs and tests)."""
        request = self.requests.get(request_id)
        if (
            reason == "straggler"
            and request is not None
            and request.get("state")
            in (
                State.ASKED.value,
                State.DIVERTED.value,
            )
        ):
            return "resolved"  # the ask went out after all while the sweep gave up on it
        if reason == "unconfirmed_send" and request is not None and request.get("delivered_at"):
            return "resolved"  # the send was confirmed after all
        markers = self.audit.entries(request_id, prefix=handover.marker_prefix(dedupe_key))
        decision = handover.claim_decision(markers, dedupe_key, now, self.lease)
        if decision.action == "sent":
            return "duplicate"
        if decision.action == "in_flight":
            return "in_flight"
        claimed = self.audit.append(
            AuditEntry(
                request_id,
                handover.claim_key(dedupe_key, decision.claim_number),
                "escalation_claim",
                {"reason": reason, "dedupe_key": dedupe_key},
                iso(now),
            )
        )
        if not claimed:
            return "in_flight"
        customer = None
        job = None
        if request is not None:
            customer = self.customers.item(str(request.get("customer_id", "")))
            job = self.jobs.get(str(request.get("customer_id", "")), str(request.get("job_ts", "")))
        mail = handover.build(
            reason=reason,
            request_id=request_id,
            request=request,
            customer=customer,
            job=job,
            trail=self.audit.entries(request_id),
            business=self.business,
            zone=self.zone,
        )
        message_id = self.messenger.send(
            Outgoing(Channel.EMAIL, self.owner_email, mail.text, mail.subject, html=mail.html)
        )
        self.audit.append(
            AuditEntry(
                request_id,
                handover.sent_key(dedupe_key),
                "escalation_sent",
                {
                    "reason": reason,
                    "dedupe_key": dedupe_key,
                    "to": self.owner_email,
                    "subject": mail.subject,
                    "text": mail.text,
                    "provider_message_id": message_id,
                },
                iso(now),
            )
        )
        metrics.count("Escalations")
        return "sent"
