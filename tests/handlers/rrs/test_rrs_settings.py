"""Every rrs function reads its settings once, with no defaults: a missing variable fails loudly.

The variables below were re-defaulted by the handlers before #16 (opening hours, time zone,
phone region, delay, retention, business name, TTLs, sweep limits, index, SMS identity, DLQ),
so a function the infra forgot to configure ran with a guess instead of failing.
"""

from __future__ import annotations

from typing import Any

import pytest

from handlers.common.settings import MissingSetting
from handlers.review_requests.functions import escalator, sender, sweep, sync, webhook
from tests.handlers.rrs.conftest import Rrs, completion, sqs_event, url_event

CASES = [
    ("webhook", "OPENING_START"),
    ("webhook", "OPENING_END"),
    ("webhook", "OPENING_TIMEZONE"),
    ("webhook", "PHONE_REGION"),
    ("webhook", "REQUEST_DELAY_HOURS"),
    ("webhook", "RETENTION_DAYS"),
    ("webhook", "SCHEDULE_DLQ_ARN"),
    ("webhook", "WEBHOOK_SECRET_ID"),
    ("sender", "OPENING_START"),
    ("sender", "OPENING_TIMEZONE"),
    ("sender", "BUSINESS_NAME"),
    ("sender", "LINK_TTL_DAYS"),
    ("sender", "SMS_ORIGINATION_IDENTITY"),
    ("escalator", "BUSINESS_NAME"),
    ("escalator", "CLAIM_LEASE_SECONDS"),
    ("sync", "PHONE_REGION"),
    ("sweep", "REQUESTS_INDEX"),
    ("sweep", "OPENING_END"),
    ("sweep", "SWEEP_GRACE_MINUTES"),
    ("sweep", "SWEEP_MAX_ATTEMPTS"),
]


def _invoke(function: str) -> Any:
    if function == "webhook":
        return webhook.handler(url_event(completion()), None)
    if function == "sender":
        return sender.handler(sqs_event({"kind": "send", "request_id": "rq-x"}), None)
    if function == "escalator":
        body = {"kind": "escalate", "request_id": "rq-x", "reason": "r", "dedupe_key": "k"}
        return escalator.handler(sqs_event(body), None)
    if function == "sync":
        return sync.handler({}, None)
    return sweep.handler({}, None)


@pytest.mark.parametrize(("function", "variable"), CASES)
def test_a_missing_variable_fails_naming_it_and_changes_nothing(
    rrs: Rrs, monkeypatch: pytest.MonkeyPatch, function: str, variable: str
) -> None:
    monkeypatch.delenv(variable)
    with pytest.raises(MissingSetting, match=variable):
        _invoke(function)
    assert rrs.items("REQUESTS_TABLE") == [] and rrs.items("AUDIT_TABLE") == []
    assert rrs.schedules() == [] and rrs.drain() == [] and rrs.emails() == []


@pytest.mark.parametrize("value", ["two", "2.5"])
def test_a_malformed_number_fails_naming_it(
    rrs: Rrs, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("REQUEST_DELAY_HOURS", value)
    with pytest.raises(MissingSetting, match="REQUEST_DELAY_HOURS is not an integer"):
        _invoke("webhook")
    assert rrs.items("REQUESTS_TABLE") == []
