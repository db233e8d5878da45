"""rrs-escalator: SQS ``escalate`` messages; one handover email to the owner per escalation.

rrs-escalations carries ``escalate`` messages only; a message of another kind is failed (not
dropped), so after five receives it waits in rrs-escalations-dlq for an operator.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from handlers.common.observability import get_logger, logged
from handlers.review_requests import settings, timing
from handlers.review_requests.domain import ESCALATE
from handlers.review_requests.work import WrongKind, expect_kind


def build_escalator() -> Any:
    """The escalation flow wired to the environment's tables and the owner's inbox."""
    from handlers.review_requests.escalation import Escalator
    from handlers.review_requests.messaging import AwsMessenger
    from handlers.review_requests.store import Audit, Customers, Jobs, Requests

    return Escalator(
        requests=Requests(settings.text("RRS_REQUESTS_TABLE")),
        customers=Customers(settings.text("RRS_CUSTOMERS_TABLE")),
        jobs=Jobs(settings.text("RRS_JOBS_TABLE")),
        audit=Audit(settings.text("RRS_AUDIT_TABLE")),
        messenger=AwsMessenger(settings.text("RRS_SENDER_EMAIL")),
        owner_email=settings.text("RRS_OWNER_EMAIL"),
        business=settings.text("RRS_BUSINESS_NAME", "our team"),
        lease=dt.timedelta(seconds=settings.number("RRS_CLAIM_LEASE_SECONDS", 60)),
    )


def parse_escalation(body: str) -> tuple[str, str, str]:
    """(request id, reason, dedupe key) of an escalate message; WrongKind for another kind,
    ValueError for an escalate message missing its fields."""
    data = expect_kind(body, ESCALATE)
    values = [data.get("request_id"), data.get("reason"), data.get("dedupe_key")]
    if not all(isinstance(v, str) and v for v in values):
        raise ValueError("escalate messages carry request_id, reason and dedupe_key")
    request_id, reason, key = (str(v) for v in values)
    if not key.replace("-", "").replace("_", "").isalnum() or len(key) > 250:
        raise ValueError("bad dedupe_key")
    return request_id, reason, key


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Process each record; report the failed ones for redelivery."""
    from aws_lambda_powertools.utilities.batch import (
        BatchProcessor,
        EventType,
        process_partial_response,
    )
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    logger = get_logger()
    escalator = build_escalator()

    def one(record: SQSRecord) -> str:
        try:
            request_id, reason, key = parse_escalation(record.body)
        except WrongKind as err:
            # Misrouted: fail it so it waits in rrs-escalations-dlq instead of being lost.
            logger.error("wrong kind on rrs-escalations", extra={"error": str(err)})
            raise
        except ValueError as err:
            logger.error("unusable escalate message", extra={"error": str(err)})
            return "dropped"
        outcome: str = escalator.process(request_id, reason, key, timing.utcnow())
        logger.info("escalation processed", extra={"request_id": request_id, "outcome": outcome})
        return outcome

    # A whole failed batch is reported record by record, like a partial one: same retries.
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    return dict(
        process_partial_response(
            event=event, record_handler=one, processor=processor, context=context
        )
    )
