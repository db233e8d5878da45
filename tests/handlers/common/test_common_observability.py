"""Structured logs: one JSON object per line, carrying the event's correlation id."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from handlers.common import observability
from handlers.common.observability import correlation_id, get_logger, logged

FUNCTION_URL = {
    "version": "2.0",
    "requestContext": {"requestId": "url-req-1", "http": {"method": "POST"}},
}
SQS = {"Records": [{"eventSource": "aws:sqs", "messageId": "sqs-msg-1", "body": "{}"}]}
EVENTBRIDGE = {"id": "eb-evt-1", "detail-type": "le.normalized", "source": "crm.ler", "detail": {}}
S3 = {"Records": [{"eventSource": "aws:s3", "responseElements": {"x-amz-request-id": "s3-req-1"}}]}
SES = {"Records": [{"eventSource": "aws:ses", "ses": {"mail": {"messageId": "ses-msg-1"}}}]}
SNS = {"Records": [{"EventSource": "aws:sns", "Sns": {"MessageId": "sns-msg-1"}}]}
STREAM = {"Records": [{"eventSource": "aws:dynamodb", "eventID": "ddb-evt-1"}]}


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (FUNCTION_URL, "url-req-1"),
        (SQS, "sqs-msg-1"),
        (EVENTBRIDGE, "eb-evt-1"),
        (S3, "s3-req-1"),
        (SES, "ses-msg-1"),
        (SNS, "sns-msg-1"),
        (STREAM, "ddb-evt-1"),
        ({"scheduled": True}, None),
        ([], None),
        ({"Records": []}, None),
    ],
)
def test_correlation_ids(event: Any, expected: str | None) -> None:
    assert correlation_id(event) == expected


def _lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """The log lines, without the EMF metric lines ``@logged`` also writes."""
    found = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    return [line for line in found if "_aws" not in line]


def test_logged_handler_writes_json_with_correlation_id(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "test-observability-1")
    logger = get_logger()

    @logged
    def handler(event: Any, context: Any) -> str:
        logger.info("handled", extra={"lead": "L-1"})
        return "ok"

    assert handler(SQS, SimpleNamespace(aws_request_id="lambda-req-1")) == "ok"
    assert handler({"scheduled": True}, SimpleNamespace(aws_request_id="lambda-req-2")) == "ok"
    first, second = _lines(capsys)
    assert first["message"] == "handled"
    assert first["service"] == "test-observability-1"
    assert first["correlation_id"] == "sqs-msg-1"
    assert first["function_request_id"] == "lambda-req-1"
    assert first["lead"] == "L-1"
    # no key leaks between invocations; with no event id the Lambda request id correlates
    assert second["correlation_id"] == "lambda-req-2"
    assert second["cold_start"] is False


def test_logged_handler_logs_and_reraises(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "test-observability-2")

    @logged
    def handler(event: Any, context: Any) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        handler(FUNCTION_URL, None)
    (line,) = _lines(capsys)
    assert line["level"] == "ERROR"
    assert line["correlation_id"] == "url-req-1"
    assert "boom" in line["exception"]


def test_logger_is_cached_per_service() -> None:
    assert get_logger("svc-a") is get_logger("svc-a")
    assert get_logger("svc-a") is not get_logger("svc-b")
    assert observability._loggers["svc-a"].service == "svc-a"
