"""rrs-sender: SQS ``send`` messages from the per-request schedules and the sweep.

Each record is one request; records fail individually (partial batch response), so one
throttled model call does not re-drive the others. After five receives a message lands in
rrs-work-dlq; the request stays ``scheduled`` and the sweep picks it up again. A message of
another kind (rrs-work carries ``send`` only) is failed too, so it reaches the DLQ, not oblivion.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from handlers.common.observability import get_logger, logged
from handlers.common.secrets import get_secret, secret_id_from_env
from handlers.review_requests import settings, timing
from handlers.review_requests.domain import SEND
from handlers.review_requests.work import WrongKind, expect_kind


def build_sender() -> Any:
    """The send flow wired to the environment's tables, queue, models and identities."""
    from handlers.common.link_tokens import Keyring
    from handlers.review_requests.domain import ESCALATE
    from handlers.review_requests.messaging import AwsMessenger
    from handlers.review_requests.sending import SendConfig, Sender
    from handlers.review_requests.store import Audit, OptOuts, Requests
    from handlers.review_requests.work import KindRoutedQueue, SqsWorkQueue

    key_id = secret_id_from_env("RRS_MESSAGING_KEY_SECRET_ID")
    return Sender(
        requests=Requests(settings.text("RRS_REQUESTS_TABLE")),
        optouts=OptOuts(settings.text("RRS_OPTOUT_TABLE")),
        audit=Audit(settings.text("RRS_AUDIT_TABLE")),
        messenger=AwsMessenger(
            settings.text("RRS_SENDER_EMAIL"), settings.text("RRS_SMS_ORIGINATION_IDENTITY", "-")
        ),
        # Unhappy grades are escalated; the sender never enqueues a send.
        work=KindRoutedQueue({ESCALATE: SqsWorkQueue(settings.text("RRS_ESCALATIONS_QUEUE_URL"))}),
        keyring=lambda: Keyring.from_secret_string(get_secret(key_id)),
        config=SendConfig(
            grade_model_id=settings.text("RRS_GRADE_MODEL_ID"),
            compose_model_id=settings.text("RRS_COMPOSE_MODEL_ID"),
            review_url=settings.text("RRS_REVIEW_URL"),
            feedback_url=settings.text("RRS_FEEDBACK_URL"),
            business=settings.text("RRS_BUSINESS_NAME", "our team"),
            window=settings.window(),
            business_timezone=settings.business_timezone(),
            link_ttl=dt.timedelta(days=settings.number("RRS_LINK_TTL_DAYS", 30)),
        ),
    )


def request_id_of(body: str, kind: str) -> str:
    """The request id of a work message of ``kind``; WrongKind for another kind, ValueError
    for a message of this kind without a usable request id."""
    data = expect_kind(body, kind)
    request_id = data.get("request_id")
    if not isinstance(request_id, str) or not request_id.startswith("rq-"):
        raise ValueError("no request_id")
    return request_id


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
    sender = build_sender()

    def one(record: SQSRecord) -> str:
        try:
            request_id = request_id_of(record.body, SEND)
        except WrongKind as err:
            # Misrouted: fail it so the queue's redrive keeps it in rrs-work-dlq for an operator.
            logger.error("wrong kind on rrs-work", extra={"error": str(err)})
            raise
        except ValueError as err:
            # A malformed message never becomes valid: drop it (logged), do not retry it.
            logger.error("unusable send message", extra={"error": str(err)})
            return "dropped"
        # The claim is unique per attempt, so only the attempt that moved the state may undo it.
        claim = f"{record.message_id}:{uuid.uuid4().hex[:12]}"
        outcome: str = sender.process(request_id, timing.utcnow(), claim=claim)
        logger.info("send processed", extra={"request_id": request_id, "outcome": outcome})
        return outcome

    # A whole failed batch is reported record by record, like a partial one: same retries.
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    return dict(
        process_partial_response(
            event=event, record_handler=one, processor=processor, context=context
        )
    )
