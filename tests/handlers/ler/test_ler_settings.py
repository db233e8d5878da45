"""Each ler handler reads exactly its contract record: a variable the infra must set and did not
fails the call naming it (no handler re-defaults it), and the Lambda context, not the
environment, names the function intake continues an upload in."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handlers.common.settings import MissingSetting
from handlers.lead_enricher.functions import dedupe, enrich, filter, intake, normalize, push
from tests.handlers.ler.conftest import Ler, context, sqs_event, url_event

EVENT = {"detail-type": "le.normalized", "detail": {}}


@pytest.mark.parametrize(
    ("handler", "event", "variable"),
    [
        (enrich.handler, EVENT, "CACHE_TTL_DAYS"),
        (dedupe.handler, EVENT, "LINK_SCORE"),
        (dedupe.handler, EVENT, "AMBIGUOUS_SCORE"),
        (filter.handler, EVENT, "JUNK_SCORE"),
        (filter.handler, EVENT, "BORDERLINE_SCORE"),
        (filter.handler, EVENT, "EVENT_SOURCE"),
        (push.handler, EVENT, "DEFAULT_PHONE_REGION"),
        (push.handler, EVENT, "HUBSPOT_API_VERSION"),
        (intake.handler, url_event("{}"), "MIN_SUBMIT_SECONDS"),
        (intake.handler, url_event("{}"), "INTAKE_AUTH"),
    ],
)
def test_a_missing_setting_fails_naming_it(
    ler: Ler, monkeypatch: pytest.MonkeyPatch, handler: Any, event: Any, variable: str
) -> None:
    monkeypatch.delenv(variable)
    with pytest.raises(MissingSetting, match=variable):
        handler(event, context())


def test_normalize_without_its_phone_region_fails_the_invocation(
    ler: Ler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As every batch consumer: a setting missing is the function's fault, not the message's,
    so the invocation fails naming it (the batch of one goes back to the queue either way)."""
    monkeypatch.delenv("DEFAULT_PHONE_REGION")
    body = json.dumps({"lead_id": "f-1", "lane": "form", "received_at": "2026-11-30T10:00:00+00:00"})
    with pytest.raises(MissingSetting, match="DEFAULT_PHONE_REGION"):
        normalize.handler(sqs_event([body]), context())


def test_an_unknown_intake_auth_mode_is_refused_naming_it(
    ler: Ler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_AUTH", "open")
    with pytest.raises(ValueError, match="INTAKE_AUTH"):
        intake.handler(url_event("{}"), context())


def test_a_long_upload_continues_in_the_function_the_context_names(
    ler: Ler, monkeypatch: pytest.MonkeyPatch
) -> None:
    invoked: list[tuple[str, Any]] = []
    monkeypatch.setattr(
        "handlers.lead_enricher.lanes.invoke_async", lambda name, event: invoked.append((name, event))
    )
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    rows = "".join(f"p{i}@analytical-engines.co.uk,Person {i}\n" for i in range(600))
    ler.put_raw("upload/long.csv", ("email,name\n" + rows).encode())
    [notification] = ler.s3_notifications()
    short = context("dev-ler-intake")
    short.get_remaining_time_in_millis = lambda: 1_000
    intake.handler(notification, short)
    [(name, event)] = invoked
    assert name == "dev-ler-intake"
    assert event["ler_upload_continue"]["key"] == "upload/long.csv"
