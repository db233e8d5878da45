"""rrs-webhook: the Function URL the job tool posts to. Authenticity first, then the event.

The signature (``X-Rrs-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">``, secret
``rrs-webhook-secret``, five-minute replay window) is checked over the exact bytes received
before the body is parsed; a request that fails it is answered 401 and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.common.forgotten import stack_salt
from handlers.common.function_url import Request, RequestError, json_response
from handlers.common.link_tokens import Keyring
from handlers.common.observability import get_logger
from handlers.common.secrets import get_secret
from handlers.common.webhook_signatures import SignedWebhook
from handlers.review_requests import contract
from handlers.review_requests.events import Completion, Feedback, parse_event
from handlers.review_requests.intake import Intake, IntakeConfig
from handlers.review_requests.scheduling import EventBridgeScheduler
from handlers.review_requests.store import Audit, Customers, Jobs, OptOuts, Requests
from handlers.review_requests.timing import Window
from handlers.review_requests.work import KindRoutedQueue, SqsWorkQueue

SIGNATURE_HEADER = "X-Rrs-Signature"
MAX_BODY_BYTES = 64 * 1024
JOB_TOOL = SignedWebhook(SIGNATURE_HEADER, "timestamped", "the request is not signed by the tool")


class Webhook:
    """The settings, and the intake flow made on the first authentic request: a refused one
    opens no table."""

    def __init__(self, config: contract.WebhookSettings) -> None:
        self.config = config

    @functools.cached_property
    def intake(self) -> Intake:
        return intake_flow(self.config)


def wire(config: contract.WebhookSettings, clock: Clock) -> Webhook:
    return Webhook(config)


def intake_flow(s: contract.WebhookSettings) -> Intake:
    """The intake flow wired to the tables, schedules and queue the settings name."""
    return Intake(
        requests=Requests(s.requests_table, contract.REQUESTS_INDEX),
        jobs=Jobs(s.jobs_table),
        customers=Customers(s.customers_table, s.customer_days),
        optouts=OptOuts(s.optout_table, salt=lambda: stack_salt(s.forget_salt_secret_id)),
        audit=Audit(s.audit_table, s.retention_days),
        scheduler=EventBridgeScheduler(
            s.schedule_group, s.work_queue_arn, s.schedule_role_arn, s.schedule_dlq_arn
        ),
        # Feedback escalations only; sends reach rrs-work through the schedules, not from here.
        work=KindRoutedQueue({contract.ESCALATE: SqsWorkQueue(s.escalations_queue_url)}),
        keyring=lambda: Keyring.from_secret_string(get_secret(s.messaging_key_secret_id)),
        config=IntakeConfig(
            delay=dt.timedelta(hours=s.request_delay_hours),
            window=Window(s.opening_start, s.opening_end),
            business_timezone=s.opening_timezone,
            phone_region=s.phone_region,
            retention_days=s.retention_days,
        ),
    )


def run(webhook: Webhook, request: Request, context: Any, clock: Clock) -> dict[str, Any]:
    """Verify, parse, act; 4xx JSON for anything the tool got wrong."""
    logger = get_logger()
    s = webhook.config
    try:
        if request.method != "POST":
            raise RequestError(405, "method_not_allowed", "POST the event")
        secret = get_secret(s.webhook_secret_id)
        refused = JOB_TOOL.refusal(request, secret, now=clock().timestamp())
        if refused is not None:
            return refused
        parsed = parse_event(request.json_object())
        intake = webhook.intake
        now = clock()
        if isinstance(parsed, Completion):
            # make verify's job event (signed like the tool's): marked as a check, never sent.
            result = intake.completion(parsed, now, check=request.check)
            status = 200
        elif request.check:
            raise RequestError(400, "check_completion_only", "a check is a job.completed event")
        elif isinstance(parsed, Feedback):
            result = intake.feedback(parsed, now)
            status = 202
        else:
            result = intake.opt_out(parsed, now)
            status = 200
        logger.info("webhook handled", extra={"event_id": parsed.event_id, **result})
        return json_response(status, {"ok": True, **result})
    except RequestError as err:
        logger.info("webhook rejected", extra={"code": err.code, "status": err.status})
        return err.response()


handler = entry.handler(
    __name__, contract.WebhookSettings, wire, run, url=True, max_body=MAX_BODY_BYTES
)
