"""rrs-sender: SQS ``send`` messages from the per-request schedules and the sweep.

Each record is one request, handled through ``handlers.common.batch``: records fail
individually (partial batch response), so one throttled model call does not re-drive the
others. After five receives a message lands in rrs-work-dlq; the request stays ``scheduled``
and the sweep picks it up again. A message of another kind (rrs-work carries ``send`` only) is
failed too, so it reaches the DLQ, not oblivion; so does a malformed ``send`` (refused).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

from handlers.common import batch, entry
from handlers.common.clock import Clock
from handlers.common.degradations import model_client
from handlers.common.link_tokens import Keyring
from handlers.common.mail_from import from_address
from handlers.common.observability import get_logger
from handlers.common.secrets import get_secret
from handlers.common.spend import SpendGuard
from handlers.review_requests import contract
from handlers.review_requests.messaging import AwsMessenger
from handlers.review_requests.sending import SendConfig, Sender
from handlers.review_requests.store import Audit, OptOuts, Requests, degradation_ledger
from handlers.review_requests.timing import Window
from handlers.review_requests.work import KindRoutedQueue, SqsWorkQueue, send_request_id

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


def wire(s: contract.SenderSettings, clock: Clock) -> Sender:
    """The send flow wired to the tables, queue, models and identities the settings name. Each
    model call and each SMS takes one of the day's ``dailyModelCalls`` or ``dailySms`` first
    (handlers/common/spend.py); a refused model is noted for the owner's notice
    (``degradations.model_client``; rrs-sweep asks for it)."""
    ledger = degradation_ledger(s.requests_table)
    return Sender(
        requests=Requests(s.requests_table, contract.REQUESTS_INDEX),
        optouts=OptOuts(s.optout_table),
        audit=Audit(s.audit_table, s.retention_days),
        messenger=AwsMessenger(
            from_address(s.sender_name or s.business_name, s.sender_email),
            s.sms_origination_identity,
            reply_to=s.reply_to_email,
        ),
        # Unhappy grades are escalated; the sender never enqueues a send.
        work=KindRoutedQueue({contract.ESCALATE: SqsWorkQueue(s.escalations_queue_url)}),
        keyring=lambda: Keyring.from_secret_string(get_secret(s.messaging_key_secret_id)),
        config=SendConfig(
            grade_model_id=s.grade_model_id,
            compose_model_id=s.compose_model_id,
            review_url=s.review_url,
            feedback_url=s.feedback_url,
            business=s.business_name,
            window=Window(s.opening_start, s.opening_end),
            business_timezone=s.opening_timezone,
            link_ttl=dt.timedelta(days=s.link_ttl_days),
        ),
        bedrock=model_client(None, ledger, contract.SENDER, clock, s.daily_model_calls),
        spend=SpendGuard.beside(ledger, {"sms": s.daily_sms}, clock),
    )


def run(sender: Sender, record: SQSRecord, context: Any, clock: Clock) -> str:
    """One ``send`` message; WrongKind (misrouted) propagates: a reported failure, so
    rrs-work-dlq keeps it."""
    try:
        request_id = send_request_id(record.body)
    except ValueError as err:
        # Never valid here: refused into rrs-work-dlq (an older format is re-driven after a fix).
        raise batch.Unusable(f"unusable send message: {err}") from err
    # The claim is unique per attempt, so only the attempt that moved the state may undo it.
    claim = f"{record.message_id}:{uuid.uuid4().hex[:12]}"
    outcome: str = sender.process(request_id, clock(), claim=claim)
    get_logger().info("send processed", extra={"request_id": request_id, "outcome": outcome})
    return outcome


handler = entry.handler(__name__, contract.SenderSettings, wire, run, batch="sqs")
