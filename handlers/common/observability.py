"""Structured JSON logs through Powertools Logger, keyed by the event's correlation id.

Every log line of one invocation carries ``correlation_id``: the id the triggering service gave
the event (Function URL request id, SQS message id, EventBridge event id, ...), falling back to
the Lambda request id. Follow one lead or order across functions by searching for it.

Powertools comes from the AWS-published layer. Logger and Tracer are imported at the top: every
invocation logs, so a cold start pays for Powertools before its first answer in any case, and
the Tracer loads the X-Ray SDK only when it is made (when the stack turns tracing on).
"""

from __future__ import annotations

import functools
import io
import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any, TypeVar, cast

from aws_lambda_powertools import Tracer
from aws_lambda_powertools.logging import Logger

HandlerT = TypeVar("HandlerT", bound=Callable[..., Any])

_loggers: dict[str, Logger] = {}
_lock = threading.Lock()
_container: dict[str, bool] = {}
"""This container's state: ``started`` once it served an invocation (cold start before).
A dict, so a host that runs several functions in one process can swap it per function."""


def forget_cold_start() -> None:
    """The next invocation is a cold start again (a new container: ``entry.registry``)."""
    _container.clear()


def _service_name(service: str | None) -> str:
    return (
        service
        or os.environ.get("POWERTOOLS_SERVICE_NAME")
        or os.environ.get("AWS_LAMBDA_FUNCTION_NAME")
        or "crm"
    )


class _Stdout(io.TextIOBase):
    """``sys.stdout`` as it is at each write. Powertools keeps the stream it was given for the
    logger's life; a process that redirects stdout later (the sandbox, one log per invocation,
    or pytest's capture) would otherwise lose the lines of a logger made before. On Lambda
    stdout never changes, so this is the same stream."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


def get_logger(service: str | None = None) -> Logger:
    """The process-wide Powertools Logger for ``service`` (default: the function's name).

    Level comes from ``POWERTOOLS_LOG_LEVEL`` (INFO when unset), output is one JSON object per
    line on stdout, which Lambda ships to the function's log group.
    """
    name = _service_name(service)
    found = _loggers.get(name)
    if found is not None:
        return found
    with _lock:
        found = _loggers.get(name)
        if found is None:
            found = Logger(service=name, use_rfc3339=True, stream=cast(IO[str], _Stdout()))
            _loggers[name] = found
        return found


def _first_record(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    records = event.get("Records")
    if isinstance(records, list) and records and isinstance(records[0], Mapping):
        return records[0]
    return None


def correlation_id(event: object) -> str | None:
    """The id the triggering service gave this event, or None if it has none.

    Function URL: ``requestContext.requestId``; SQS: ``messageId``; SNS: ``Sns.MessageId``;
    SES: ``ses.mail.messageId``; S3: the ``x-amz-request-id`` of the PUT; DynamoDB stream:
    ``eventID``; EventBridge: ``id``. Batches report their first record; log per-record ids with
    ``logger.append_keys`` inside the loop.
    """
    if not isinstance(event, Mapping):
        return None
    context = event.get("requestContext")
    if isinstance(context, Mapping) and context.get("requestId"):
        return str(context["requestId"])
    record = _first_record(event)
    if record is not None:
        source = record.get("eventSource") or record.get("EventSource")
        if source == "aws:sqs" and record.get("messageId"):
            return str(record["messageId"])
        if source == "aws:sns":
            return _text((record.get("Sns") or {}).get("MessageId"))
        if source == "aws:ses":
            return _text(((record.get("ses") or {}).get("mail") or {}).get("messageId"))
        if source == "aws:s3":
            return _text((record.get("responseElements") or {}).get("x-amz-request-id"))
        if source == "aws:dynamodb":
            return _text(record.get("eventID"))
        return _text(record.get("messageId") or record.get("eventID"))
    if "detail-type" in event and event.get("id"):
        return str(event["id"])
    return None


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def tracing_enabled() -> bool:
    """Whether the stack turned tracing on (``POWERTOOLS_TRACE_DISABLED`` is ``false``)."""
    return os.environ.get("POWERTOOLS_TRACE_DISABLED", "true").lower() == "false"


def _traced(handler: HandlerT) -> HandlerT:
    """The handler under Powertools Tracer, imported only when the stack turned tracing on.

    The Tracer patches boto3 and sends segments to the X-Ray daemon that Lambda's active
    tracing runs (Powertools, "Tracer": https://docs.powertools.aws.dev/lambda/python/latest/core/tracer/).
    Its dependency, ``aws-xray-sdk``, ships in the Powertools layer every function has
    (Powertools, "Installation": the layer carries the extra dependencies,
    https://docs.aws.amazon.com/powertools/python/latest/getting-started/install/).
    """
    if not tracing_enabled():
        return handler
    return Tracer(service=_service_name(None)).capture_lambda_handler(handler)  # type: ignore[return-value]


def logged(handler: HandlerT) -> HandlerT:
    """Decorate a Lambda handler: fresh log keys per invocation, correlation id, cold start
    (logged on every line; not a metric), and tracing when the stack turned it on.

    An exception escaping the handler is logged with its stack trace, then re-raised so Lambda
    reports the failure (and SQS/EventBridge retry as configured).
    """
    inner = _traced(handler)

    @functools.wraps(handler)
    def wrapper(event: Any, context: Any, *args: Any, **kwargs: Any) -> Any:
        logger = get_logger()
        cold = not _container.get("started")
        request = getattr(context, "aws_request_id", None)
        logger.clear_state()
        logger.append_keys(
            cold_start=cold,
            function_request_id=request,
            correlation_id=correlation_id(event) or request,
        )
        _container["started"] = True
        try:
            return inner(event, context, *args, **kwargs)
        except Exception:
            logger.exception("unhandled error")
            raise

    return wrapper  # type: ignore[return-value]
