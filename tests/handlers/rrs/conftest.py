"""rrs handler tests: the scenario on the dev stack's moto world (tests/handlers/conftest.py).

``rrs`` sets the environment the graph gives the rrs functions, so the handlers run in-process
exactly as deployed, and adds this scenario's secrets and owner. Bedrock is the scripted fake from
``testsupport.common``; SMS (not emulated by moto) goes through a botocore Stubber.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from handlers.common.aws_clients import client, table
from handlers.common.entry import registry
from handlers.common.webhook_signatures import sign_timestamped
from tests.handlers.conftest import FunctionEnv
from testsupport import events
from testsupport.common import FakeBedrockClient

ACCOUNT = "123456789012"
REGION = "eu-west-2"
WEBHOOK_SECRET = "whsec_test_0123456789abcdefghijklmnop"
KEYRING = {"active_kid": "k1", "keys": {"k1": "k" * 40}}
REVIEW_URL = "https://g.page/r/example/review"  # the dev stack's (Pulumi.dev.yaml)
FEEDBACK_URL = "https://www.example.com/feedback"
SMS_ARN = f"arn:aws:sms-voice:{REGION}:{ACCOUNT}:pool/pool-0123456789abcdef0123456789abcdef"
QUEUE = "dev-rrs-work"
ESCALATIONS = "dev-rrs-escalations"
GROUP = "dev-rrs-requests"
NOW = dt.datetime(2026, 6, 10, 10, 0, tzinfo=dt.UTC)
"""A Wednesday, 11:00 in London (BST): inside the default opening hours 09:00-18:00."""

ENV: Mapping[str, str] = os.environ
"""The running test's environment: the ``rrs`` fixture sets every rrs function's from the graph."""
OWNER = "owner@example.com"
"""This scenario's owner address (the dev stack's is ops@example.com)."""


@dataclass
class Rrs:
    """Handles on the moto resources plus helpers to read them back."""

    bedrock: FakeBedrockClient = field(default_factory=FakeBedrockClient)
    sms: list[dict[str, Any]] = field(default_factory=list)
    mail: list[dict[str, Any]] = field(default_factory=list)
    """Every SES v2 SendEmail request, as sent (moto keeps only the HTML part of a mail)."""
    now: dt.datetime = NOW

    def table(self, key: str) -> Any:
        return table(ENV[key])

    def items(self, key: str) -> list[dict[str, Any]]:
        return list(self.table(key).scan().get("Items", []))

    def request(self, request_id: str) -> dict[str, Any]:
        item = self.table("REQUESTS_TABLE").get_item(Key={"request_id": request_id})
        return dict(item["Item"])

    def audit(self, request_id: str) -> list[dict[str, Any]]:
        from boto3.dynamodb.conditions import Key

        page = self.table("AUDIT_TABLE").query(
            KeyConditionExpression=Key("request_id").eq(request_id)
        )
        return list(page.get("Items", []))

    def schedules(self) -> list[dict[str, Any]]:
        return list(client("scheduler").list_schedules(GroupName=GROUP).get("Schedules", []))

    def schedule(self, name: str) -> dict[str, Any]:
        return dict(client("scheduler").get_schedule(GroupName=GROUP, Name=name))

    def drain(self, *queues: str) -> list[dict[str, Any]]:
        """Every message waiting (received and deleted), as parsed bodies: on the queues whose
        URL variables are named (``WORK_QUEUE_URL``, ``ESCALATIONS_QUEUE_URL``), else
        on both, rrs-work first."""
        sqs = client("sqs")
        bodies: list[dict[str, Any]] = []
        for key in queues or ("WORK_QUEUE_URL", "ESCALATIONS_QUEUE_URL"):
            while True:
                answer = sqs.receive_message(
                    QueueUrl=ENV[key], MaxNumberOfMessages=10, WaitTimeSeconds=0
                )
                messages = answer.get("Messages", [])
                if not messages:
                    break
                for message in messages:
                    bodies.append(json.loads(message["Body"]))
                    sqs.delete_message(QueueUrl=ENV[key], ReceiptHandle=message["ReceiptHandle"])
        return bodies

    def sends(self) -> list[dict[str, Any]]:
        """The messages waiting on rrs-work (sender's queue)."""
        return self.drain("WORK_QUEUE_URL")

    def escalations(self) -> list[dict[str, Any]]:
        """The messages waiting on rrs-escalations (escalator's queue)."""
        return self.drain("ESCALATIONS_QUEUE_URL")

    def emails(self) -> list[Any]:
        from moto.core import DEFAULT_ACCOUNT_ID  # type: ignore[attr-defined]
        from moto.ses.models import ses_backends

        return list(ses_backends[DEFAULT_ACCOUNT_ID][REGION].sent_messages)

    def texts(self) -> list[str]:
        """The plain-text part of every mail sent, in order."""
        return [m["Content"]["Simple"]["Body"]["Text"]["Data"] for m in self.mail]

    def put_customer(self, customer_id: str = "c-1", **fields: Any) -> None:
        item = {
            "customer_id": customer_id,
            "name": "Ann Smith",
            "email": "ann@example.org",
            "phone": "+447911123456",
            "timezone": "Europe/London",
            "prior_sentiment": "positive",
            "past_complaints": 0,
        }
        item.update(fields)
        self.table("CUSTOMERS_TABLE").put_item(
            Item={k: v for k, v in item.items() if v is not None}
        )


FORGET_SALT = "rrs-test-forget-salt-" + "s" * 40

@pytest.fixture
def rrs(function_env: FunctionEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rrs]:
    """rrs on the dev stack's moto world, every rrs function's environment from the graph,
    this scenario's secrets and owner, the clock pinned at ``NOW``."""
    env = function_env("rrs-webhook", "rrs-sender", "rrs-escalator", "rrs-sweep", "rrs-sync")
    monkeypatch.setenv("OWNER_EMAIL", OWNER)
    secrets = client("secretsmanager")
    secrets.put_secret_value(SecretId=env["WEBHOOK_SECRET_ID"], SecretString=WEBHOOK_SECRET)
    secrets.put_secret_value(
        SecretId=env["MESSAGING_KEY_SECRET_ID"], SecretString=json.dumps(KEYRING)
    )
    secrets.put_secret_value(SecretId=env["FORGET_SALT_SECRET_ID"], SecretString=FORGET_SALT)

    state = Rrs()
    registry.override(clock=lambda: state.now)
    monkeypatch.setattr(
        "handlers.common.model_call.bedrock_runtime", lambda region=None: state.bedrock
    )

    from botocore.stub import Stubber

    sms_client = client("pinpoint-sms-voice-v2")
    stubber = Stubber(sms_client)
    original = sms_client.send_text_message

    def record_sms(**kwargs: Any) -> dict[str, Any]:
        state.sms.append(kwargs)
        stubber.add_response(
            "send_text_message", {"MessageId": f"sms-{len(state.sms)}"}, expected_params=kwargs
        )
        return dict(original(**kwargs))

    stubber.activate()
    monkeypatch.setattr(sms_client, "send_text_message", record_sms)
    ses = client("sesv2")
    send_email = ses.send_email

    def record_mail(**kwargs: Any) -> dict[str, Any]:
        state.mail.append(kwargs)
        return dict(send_email(**kwargs))

    monkeypatch.setattr(ses, "send_email", record_mail)
    yield state
    stubber.deactivate()


# Webhook helpers ------------------------------------------------------------------------


def url_event(
    body: dict[str, Any] | bytes,
    *,
    secret: str = WEBHOOK_SECRET,
    signature: str | None = None,
    method: str = "POST",
    timestamp: int | None = None,
) -> dict[str, Any]:
    """A Function URL (payload 2.0) event carrying ``body``, signed like the tool signs."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    if signature is None:
        signature = sign_timestamped(
            raw, secret, int(registry.now().timestamp()) if timestamp is None else timestamp
        )
    return events.url_event(raw, headers={"x-rrs-signature": signature}, method=method)


def completion(
    completion_id: str = "cmp-1",
    *,
    customer_id: str = "c-1",
    completed_at: dt.datetime = NOW - dt.timedelta(hours=1),
    signal: dict[str, Any] | None = None,
    customer: dict[str, Any] | None = None,
    title: str = "Boiler service",
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "job.completed",
        "id": f"evt-{completion_id}",
        "completion_id": completion_id,
        "customer_id": customer_id,
        "completed_at": completed_at.isoformat().replace("+00:00", "Z"),
        "job": {"id": f"job-{completion_id}", "title": title},
    }
    if signal is not None:
        event["signal"] = signal
    if customer is not None:
        event["customer"] = customer
    return event


def response_body(response: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(response["body"]))


# SQS and model helpers ------------------------------------------------------------------


def sqs_event(*bodies: dict[str, Any], receive_count: int = 1) -> dict[str, Any]:
    """An SQS event as the event source mapping delivers it."""
    return events.sqs_event(
        (json.dumps(body) for body in bodies),
        queue_arn=ENV["WORK_QUEUE_ARN"],
        receive_count=receive_count,
        message_id="m-{i}-{n}",
    )


def grade_answer(band: str, confidence: float = 0.9) -> dict[str, Any]:
    return {"band": band, "confidence": confidence, "reasons": [f"the facts say {band}"]}


def draft_answer(body: str, subject: str | None = "How did we do, Ann?") -> dict[str, Any]:
    return {"subject": subject, "body": body}


GOOD_EMAIL_DRAFT = (
    "Hi Ann, thank you for having us round for your boiler service this morning. "
    "If you were pleased with the work, a short review would mean a lot to our small team."
)
GOOD_FEEDBACK_DRAFT = (
    "Hi Ann, thank you for having us round for your boiler service. We would really value "
    "your honest thoughts on how it went, good or bad; they go straight to the owner."
)
