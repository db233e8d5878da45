"""What rrs-escalator does with one escalation: claim it once, build the mail, email it.

The mail is a handover (one request, ``handover``) or, for reason ``degraded``, the notice of
degradations (``notice``: the fix to ``alertEmail``, the business's side to the owner), both
claimed once through the same audit markers.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from handlers.common import metrics
from handlers.common.degradations import Ledger
from handlers.common.html_kit import Mail
from handlers.review_requests import handover, notice
from handlers.review_requests.contract import DEGRADABLE, DEGRADED_REASON
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
    ledger: Ledger | None = None
    """rrs's degradation notes (rrs-requests), named in the notice; None: no notice."""
    alert_email: str = ""
    """``alertEmail``: who deployed the stack, mailed the fix of a degradation."""

    def process(self, request_id: str, reason: str, dedupe_key: str, now: dt.datetime) -> str:
        """Handle one escalate message; returns the outcome (for logs and tests)."""
        if reason == DEGRADED_REASON:
            return self.notify_degraded(request_id, dedupe_key, now)
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
        claimed = self._claim(request_id, reason, dedupe_key, now)
        if claimed != "claimed":
            return claimed
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
        self._send(request_id, reason, dedupe_key, mail, now)
        metrics.count("Escalations")
        return "sent"

    def notify_degraded(self, notices_id: str, dedupe_key: str, now: dt.datetime) -> str:
        """The owner's notice of degradations: every live note, claimed once per dedupe key."""
        if self.ledger is None:
            return "no_ledger"
        found = self.ledger.seen(DEGRADABLE, now.timestamp() - self.ledger.retention_s)
        if not found:
            return "nothing_noted"  # the notes expired before the message was read
        claimed = self._claim(notices_id, DEGRADED_REASON, dedupe_key, now)
        if claimed != "claimed":
            return claimed
        region = str(self.ledger.table.meta.client.meta.region_name)  # rrs's one Region
        fix = notice.for_deployer(found, business=self.business, zone=self.zone, region=region)
        # The fix first: the owner's mail says it has gone out.
        self.messenger.send(Outgoing(Channel.EMAIL, self.alert_email, fix.text, fix.subject, html=fix.html))
        mail = notice.build(found, business=self.business, zone=self.zone, alert_email=self.alert_email)
        self._send(notices_id, DEGRADED_REASON, dedupe_key, mail, now)
        return "sent"

    def _claim(self, request_id: str, reason: str, dedupe_key: str, now: dt.datetime) -> str:
        """``claimed`` when this call may send; ``duplicate`` or ``in_flight`` otherwise."""
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
        return "claimed" if claimed else "in_flight"

    def _send(
        self, request_id: str, reason: str, dedupe_key: str, mail: Mail, now: dt.datetime
    ) -> None:
        """Mail the owner, then write the ``sent`` marker a redelivery stops at."""
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
