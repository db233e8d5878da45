"""rrs-escalator: SQS ``escalate`` messages; one handover email to the owner per escalation,
and the owner's notice of degradations when rrs-sweep asks for it (reason ``degraded``).

rrs-escalations carries ``escalate`` messages only, consumed through
``handlers.common.batch``: a message of another kind is failed (not dropped), so after five
receives it waits in rrs-escalations-dlq for an operator; so does a malformed ``escalate``
(refused, ``batch.Unusable``).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from handlers.common import batch, entry
from handlers.common.clock import Clock
from handlers.common.observability import get_logger
from handlers.review_requests import contract
from handlers.review_requests.escalation import Escalator
from handlers.review_requests.messaging import AwsMessenger
from handlers.review_requests.store import Audit, Customers, Jobs, Requests, degradation_ledger
from handlers.review_requests.work import parse_escalation

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


def wire(s: contract.EscalatorSettings, clock: Clock) -> Escalator:
    """The escalation flow wired to the tables and the owner's inbox the settings name."""
    return Escalator(
        requests=Requests(s.requests_table, contract.REQUESTS_INDEX),
        customers=Customers(s.customers_table, s.customer_days),
        jobs=Jobs(s.jobs_table),
        audit=Audit(s.audit_table, s.retention_days),
        # The handover is an email: this function holds no SMS identity.
        messenger=AwsMessenger(s.sender_email, None),
        owner_email=s.owner_email,
        business=s.business_name,
        lease=dt.timedelta(seconds=s.claim_lease_seconds),
        zone=s.opening_timezone,
        ledger=degradation_ledger(s.requests_table),
        alert_email=s.alert_email,
    )


def run(escalator: Escalator, record: SQSRecord, context: Any, clock: Clock) -> str:
    """One ``escalate`` message; WrongKind (misrouted) propagates: a reported failure, so the
    DLQ keeps it."""
    try:
        request_id, reason, key = parse_escalation(record.body)
    except ValueError as err:
        raise batch.Unusable(f"unusable escalate message: {err}") from err
    outcome: str = escalator.process(request_id, reason, key, clock())
    get_logger().info("escalation processed", extra={"request_id": request_id, "outcome": outcome})
    return outcome


handler = entry.handler(__name__, contract.EscalatorSettings, wire, run, batch="sqs")
