"""rrs-webhook: the Function URL the job tool posts to. Authenticity first, then the event.

The signature (``X-Rrs-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">``, secret
``rrs-webhook-secret``, five-minute replay window) is checked over the exact bytes received
before the body is parsed; a request that fails it is answered 401 and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from handlers.common.function_url import (
    RequestError,
    header,
    http_method,
    json_error,
    json_response,
    parse_json_object,
    raw_body,
)
from handlers.common.observability import get_logger, logged
from handlers.common.secrets import get_secret, secret_id_from_env
from handlers.common.webhook_signatures import SignatureError, verify_timestamped
from handlers.review_requests import settings, timing
from handlers.review_requests.events import Completion, Feedback, parse_event

SIGNATURE_HEADER = "X-Rrs-Signature"
MAX_BODY_BYTES = 64 * 1024


def build_intake() -> Any:
    """The intake flow wired to the tables, schedules and queue named by the environment."""
    from handlers.common.link_tokens import Keyring
    from handlers.review_requests.domain import ESCALATE
    from handlers.review_requests.intake import Intake, IntakeConfig
    from handlers.review_requests.scheduling import EventBridgeScheduler
    from handlers.review_requests.store import Audit, Customers, Jobs, OptOuts, Requests
    from handlers.review_requests.work import KindRoutedQueue, SqsWorkQueue

    key_id = secret_id_from_env("RRS_MESSAGING_KEY_SECRET_ID")
    return Intake(
        requests=Requests(settings.text("RRS_REQUESTS_TABLE")),
        jobs=Jobs(settings.text("RRS_JOBS_TABLE")),
        customers=Customers(settings.text("RRS_CUSTOMERS_TABLE")),
        optouts=OptOuts(settings.text("RRS_OPTOUT_TABLE")),
        audit=Audit(settings.text("RRS_AUDIT_TABLE")),
        scheduler=EventBridgeScheduler(
            settings.text("RRS_SCHEDULE_GROUP"),
            settings.text("RRS_WORK_QUEUE_ARN"),
            settings.text("RRS_SCHEDULE_ROLE_ARN"),
            os.environ.get("RRS_SCHEDULE_DLQ_ARN", ""),
        ),
        # Feedback escalations only; sends reach rrs-work through the schedules, not from here.
        work=KindRoutedQueue({ESCALATE: SqsWorkQueue(settings.text("RRS_ESCALATIONS_QUEUE_URL"))}),
        keyring=lambda: Keyring.from_secret_string(get_secret(key_id)),
        config=IntakeConfig(
            delay=dt.timedelta(hours=settings.number("RRS_REQUEST_DELAY_HOURS", 2)),
            window=settings.window(),
            business_timezone=settings.business_timezone(),
            phone_region=settings.phone_region(),
            retention_days=settings.number("RRS_RETENTION_DAYS", 400),
        ),
    )


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Verify, parse, act; 4xx JSON for anything the tool got wrong."""
    logger = get_logger()
    try:
        if http_method(event) != "POST":
            raise RequestError(405, "method_not_allowed", "POST the event")
        body = raw_body(event, max_bytes=MAX_BODY_BYTES)
        secret = get_secret(secret_id_from_env("RRS_WEBHOOK_SECRET_ID"))
        try:
            verify_timestamped(body, header(event, SIGNATURE_HEADER), secret)
        except SignatureError as err:
            logger.warning("webhook refused", extra={"failure": err.failure.value})
            return json_error(401, "invalid_signature", "the request is not signed by the tool")
        parsed = parse_event(parse_json_object(body, max_bytes=MAX_BODY_BYTES))
        intake = build_intake()
        now = timing.utcnow()
        if isinstance(parsed, Completion):
            result = intake.completion(parsed, now)
            status = 200
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
