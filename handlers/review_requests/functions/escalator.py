"""rrs-escalator: SQS ``escalate`` messages; one handover email to the owner per escalation.

rrs-escalations carries ``escalate`` messages only, consumed through
``handlers.common.batch``: a message of another kind is failed (not dropped), so after five
receives it waits in rrs-escalations-dlq for an operator; a malformed ``escalate`` is dropped.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from handlers.common import batch, settings
from handlers.common.observability import get_logger, logged
from handlers.review_requests import contract, timing
from handlers.review_requests.work import parse_escalation

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    from handlers.review_requests.escalation import Escalator


def build(s: contract.EscalatorSettings) -> Escalator:
    """The escalation flow wired to the tables and the owner's inbox the settings name."""
    from handlers.review_requests.escalation import Escalator
    from handlers.review_requests.messaging import AwsMessenger
    from handlers.review_requests.store import Audit, Customers, Jobs, Requests

    return Escalator(
        requests=Requests(s.requests_table, contract.REQUESTS_INDEX),
        customers=Customers(s.customers_table),
        jobs=Jobs(s.jobs_table),
        audit=Audit(s.audit_table),
        # The handover is an email: this function holds no SMS identity.
        messenger=AwsMessenger(s.sender_email, None),
        owner_email=s.owner_email,
        business=s.business_name,
        lease=dt.timedelta(seconds=s.claim_lease_seconds),
    )


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Process each record; report the failed ones for redelivery."""
    logger = get_logger()
    escalator = build(settings.current(contract.EscalatorSettings))

    def one(record: SQSRecord) -> str:
        # WrongKind (misrouted) propagates: a reported failure, so the DLQ keeps it.
        try:
            request_id, reason, key = parse_escalation(record.body)
        except ValueError as err:
            raise batch.Unusable(f"unusable escalate message: {err}") from err
        outcome: str = escalator.process(request_id, reason, key, timing.utcnow())
        logger.info("escalation processed", extra={"request_id": request_id, "outcome": outcome})
        return outcome

    return batch.sqs_batch(event, context, one)
