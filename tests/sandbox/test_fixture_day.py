"""The sandbox engine on the fixture system: every trigger kind, end states asserted."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from handlers.common.observability import get_logger
from sandbox import runtime
from sandbox.core import Sandbox
from sandbox.play import play_days
from tests.sandbox.fixture_scenario import FixtureDay
from tests.sandbox.fixture_system import resolve_handler


def test_the_fixture_day_ends_in_the_expected_state(fixture_sandbox: Sandbox) -> None:
    sb = fixture_sandbox
    out = io.StringIO()
    [result] = play_days(sb, [("tst", "Sandbox fixture", "eu-west-2", FixtureDay())], out=out)
    failed = [c.name for c in result.checks if not c.ok]
    assert result.ok, (failed, result.crashed, out.getvalue())

    tickets = {t["ticket_id"]: t for t in sb.items("tst-tickets")}
    assert set(tickets) >= {"T1", "T2", "T3", "P1"}
    assert tickets["T1"]["urgency"] == "low" and tickets["T1"]["channel"] == "url"
    assert tickets["T3"]["channel"] == "upload"
    mail = [t for t in tickets.values() if t["channel"] == "mail"]
    assert len(mail) == 1 and mail[0]["urgency"] == "high"
    # The stream's failure record names the batch, as Lambda's on-failure destination does.
    assert sb.queue_depth("tst-failures") == 1
    sqs = sb.internal("sqs", "eu-west-2")
    url = sqs.get_queue_url(QueueName="dev-tst-failures")["QueueUrl"]
    body = json.loads(sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"])
    assert body["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert body["DDBStreamBatchInfo"]["batchSize"] == 1
    # The model stand-in answered every triage through the forced tool.
    assert {c.tool for c in sb.model.calls} == {"triage"}
    # The report printed each step and the summary.
    text = out.getvalue()
    assert "ran    tst-worker <- sqs:dev-tst-work" in text and "== Summary" in text


def test_function_url_event_is_payload_format_2(fixture_sandbox: Sandbox) -> None:
    sb = fixture_sandbox
    seen: list[Any] = []
    sb.runtime.listeners.append(seen.append)  # type: ignore[union-attr]
    try:
        sb.http(
            "tst-intake",
            "POST",
            "/tickets?a=1&a=2&b=x",
            body=b"\x00\x01",
            headers={
                "X-Token": "nope",
                "Content-Type": "application/octet-stream",
                "Cookie": "v=1; w=2",
            },
        )
    finally:
        sb.runtime.listeners.remove(seen.append)  # type: ignore[union-attr]
    event = seen[-1].event
    assert event["version"] == "2.0"
    assert event["rawPath"] == "/tickets" and event["rawQueryString"] == "a=1&a=2&b=x"
    assert event["queryStringParameters"] == {"a": "1,2", "b": "x"}
    assert event["headers"]["x-token"] == "nope"
    assert event["cookies"] == ["v=1", "w=2"]
    assert event["isBase64Encoded"] is True and event["body"] == "AAE="
    assert event["requestContext"]["http"]["method"] == "POST"
    assert event["requestContext"]["requestId"]


def test_an_iam_url_refuses_unsigned_requests(fixture_sandbox: Sandbox) -> None:
    assert fixture_sandbox.http("tst-sweep", "POST", "/", body="{}").status == 403
    assert fixture_sandbox.http("tst-sweep", "POST", "/", body="{}", sign=True).status == 200


def test_the_handler_sees_only_its_declared_environment(fixture_sandbox: Sandbox) -> None:
    spec = fixture_sandbox.function("tst-audit")
    env = fixture_sandbox.runtime.environment(spec)  # type: ignore[union-attr]
    assert env["INBOX_BUCKET"] == "dev-tst-inbox-123456789012"
    assert env["AWS_REGION"] == "eu-west-2" and env["AWS_LAMBDA_FUNCTION_NAME"] == "dev-tst-audit"
    assert env["AWS_ENDPOINT_URL"].startswith("http://127.0.0.1:")
    assert "TICKETS_TABLE" not in env  # another function's variable


def test_a_handlers_log_lines_are_its_invocations_wherever_its_logger_was_made(
    fixture_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A logger made while stdout was elsewhere (an earlier test in this process, pytest's
    capture between this module's sandbox and this test) still logs into the invocation:
    make upgrade-check reads a drop from those lines."""
    sb = fixture_sandbox
    elsewhere = io.StringIO()
    with contextlib.redirect_stdout(elsewhere):
        get_logger("tst-made-elsewhere")
    spec = sb.function("tst-audit")
    module = importlib.import_module(resolve_handler(spec.handler).rpartition(".")[0])

    def logging(event: Any, context: Any) -> dict[str, Any]:
        get_logger("tst-made-elsewhere").error("unusable record dropped", extra={"record": "r1"})
        return {"batchItemFailures": []}

    monkeypatch.setattr(module, "handler", logging)
    invocation = sb.runtime.invoke(spec.name, {"Records": []}, source="test")  # type: ignore[union-attr]
    assert '"record":"r1"' in invocation.logs.replace(" ", ""), invocation.logs
    assert elsewhere.getvalue() == ""


def test_only_the_handler_and_the_threads_it_starts_write_into_its_log(
    fixture_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """While an invocation runs (the pump's, in the background), what the test prints stays
    the test's: ``make verify``'s lines are read from the test's output."""
    sb = fixture_sandbox
    spec = sb.function("tst-audit")
    module = importlib.import_module(resolve_handler(spec.handler).rpartition(".")[0])
    running, printed = threading.Event(), threading.Event()

    def waiting(event: Any, context: Any) -> dict[str, Any]:
        running.set()
        printed.wait(timeout=30)
        pool = threading.Thread(target=lambda: print("from the handler's thread"))
        pool.start()
        pool.join()
        return {"batchItemFailures": []}

    monkeypatch.setattr(module, "handler", waiting)
    done: list[Any] = []
    background = threading.Thread(
        target=lambda: done.append(sb.runtime.invoke(spec.name, {"Records": []}, source="test"))  # type: ignore[union-attr]
    )
    background.start()
    assert running.wait(timeout=30)
    print("from the test")
    printed.set()
    background.join()
    assert done[0].logs == "from the handler's thread\n"
    assert "from the test" in capsys.readouterr().out


def test_a_cold_start_slower_than_the_timeout_is_init_not_a_time_out(
    fixture_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Importing the handler is Lambda's Init phase, outside the function's timeout: on a
    loaded machine a slow import does not time out the invocation (its own run still can)."""
    sb = fixture_sandbox
    spec = sb.function("tst-audit")
    clock = [0.0]  # the runtime's monotonic clock, moved by hand: no test waits
    monkeypatch.setattr(runtime, "time", SimpleNamespace(monotonic=lambda: clock[0], time=time.time))
    assert sb.runtime is not None
    resolve = sb.runtime.handler

    def slow_import(function: Any) -> Any:
        clock[0] += spec.timeout_s + 1
        return resolve(function)

    monkeypatch.setattr(sb.runtime, "handler", slow_import)
    assert sb.runtime.invoke(spec.name, {"Records": []}, source="test").error is None
    module = importlib.import_module(resolve_handler(spec.handler).rpartition(".")[0])

    def slow_run(event: Any, context: Any) -> dict[str, Any]:
        clock[0] += spec.timeout_s + 1
        return {"batchItemFailures": []}

    monkeypatch.setattr(module, "handler", slow_run)
    late = sb.runtime.invoke(spec.name, {"Records": []}, source="test")
    assert late.error == f"Task timed out after {spec.timeout_s}.00 seconds"
