"""Secret reads survive a flood: while rrs-webhook is flooded, Parameter Store throttles every
GetParameter of the account and region (its standard throughput is shared). The flooded
surface, whose container has not read its key yet, answers 503 with ``Retry-After`` (JSON to a
program, a page to a browser) and writes nothing; ls, whose capture function read its key
before the flood, keeps capturing enquiries and stitching them; when the throttle ends,
rrs-webhook takes the job tool's retry."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from sandbox import scenarios
from sandbox.core import HttpAnswer, Sandbox
from sandbox.scenarios.rrs import WEBHOOK_SECRET
from testsupport.graphs import shared

FLOOD = 20
SITE = "https://www.example.com"
BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"


def throttled(
    service: str, operation: str, params: Mapping[str, Any], function: str | None
) -> dict[str, Any]:
    """Parameter Store over its rate: HTTP 400 ``ThrottlingException`` ("Rate exceeded"), the
    common error of every Systems Manager action (Systems Manager API Reference, "Common
    Errors": https://docs.aws.amazon.com/systems-manager/latest/APIReference/CommonErrors.html)."""
    return {
        "Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"},
        "ResponseMetadata": {"HTTPStatusCode": 400},
    }


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    # The dev stack's graph, built once for the sandbox tests (test_systems.py plays it too).
    with Sandbox(shared().program("dev")) as running:
        for key in ("ls", "rrs"):
            scenario = scenarios.load(key)
            assert scenario is not None
            scenario.prepare(running)  # the secrets, as `make secrets` sets them
        yield running


def _enquiry(sb: Sandbox, submission: str) -> HttpAnswer:
    body = {
        "kind": "enquiry",
        "url": f"{SITE}/contact",
        "email": "pat@example.org",
        "heard_about": "",
        "submission_id": submission,
    }
    return sb.http(
        "ls-capture", "POST", "/", body=json.dumps(body),
        headers={"origin": SITE, "user-agent": BROWSER_UA, "content-type": "text/plain"},
    )


def _completion(sb: Sandbox, n: int, *, secret: str, accept: str = "application/json") -> HttpAnswer:
    # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
    from handlers.common.webhook_signatures import sign_timestamped

    event = {
        "type": "job.completed",
        "id": f"evt-flood-{n}",
        "completion_id": f"cmp-flood-{n}",
        "customer_id": "c-ann",
        "completed_at": (sb.clock.now() - dt.timedelta(minutes=30)).isoformat(),
        "job": {"id": f"job-flood-{n}", "title": "Boiler service"},
        "signal": {"rating": 5, "notes": "", "complaint": False},
    }
    body = json.dumps(event).encode()
    signature = sign_timestamped(body, secret, int(sb.clock.now().timestamp()))
    return sb.http(
        "rrs-webhook", "POST", "/", body=body,
        headers={"content-type": "application/json", "accept": accept, "x-rrs-signature": signature},
    )


def _header(answer: HttpAnswer, name: str) -> str:
    return {k.lower(): v for k, v in answer.headers.items()}.get(name, "")


def test_a_flood_on_one_surface_during_a_throttle(sb: Sandbox) -> None:
    assert _enquiry(sb, "before-the-flood").status == 200  # ls-capture reads its key now
    sb.drain()
    webhook = sb.name("rrs-webhook")

    sb.interceptor.stand_ins[("ssm", "GetParameter")] = throttled
    try:
        mark = len(sb.interceptor.ledger)
        flood = [_completion(sb, n, secret="forged") for n in range(FLOOD)]
        signed = _completion(sb, FLOOD, secret=WEBHOOK_SECRET)
        page = _completion(sb, FLOOD + 1, secret="forged", accept="text/html")
        during = _enquiry(sb, "during-the-flood")
        sb.drain()
        calls = {(r.service, r.operation, r.status) for r in sb.interceptor.ledger[mark:]
                 if r.function == webhook}
    finally:
        del sb.interceptor.stand_ins[("ssm", "GetParameter")]

    for answer in [*flood, signed]:
        assert answer.status == 503, answer.text
        assert _header(answer, "retry-after") == "5"
        assert _header(answer, "content-type").startswith("application/json")
        assert answer.json()["error"]["code"] == "busy"
    assert page.status == 503 and _header(page, "retry-after") == "5"
    assert "<html" in page.text and "busy" in page.text.lower()
    # The flooded surface only tried to read its key, and wrote nothing.
    assert calls == {("ssm", "GetParameter", 400)}
    assert sb.items("rrs-requests") == []
    # ls, its key read before, went on: the enquiry captured and stitched to the first.
    assert during.status == 200, during.text
    assert len(sb.items("ls-enquiries")) == 2
    assert sb.items("ls-identities")

    # The throttle over, the job tool's retry of the signed completion is taken.
    again = _completion(sb, FLOOD, secret=WEBHOOK_SECRET)
    assert again.status in (200, 202), again.text
    assert [r["request_id"] for r in sb.items("rrs-requests")]
    assert _completion(sb, FLOOD + 2, secret="forged").status == 401
