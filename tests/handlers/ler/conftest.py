"""The lead enricher's scenario on the dev stack's moto world (tests/handlers/conftest.py), and a pump.

``ler`` points every handler at the world through the environment the graph gives it, and swaps the three things moto cannot
play for fakes: the CRM (``FakeCrm``), the firmographic provider (``FakeFirmographics``) and
Bedrock (``FakeBedrockClient``). EventBridge is real moto: a rule on this stack's source
copies every PutEvents to a tap queue, and ``pump`` feeds each event to the handler its
infra rule targets, so a lead walks the same chain it walks in AWS. ler-raw notifies an SQS
queue for exactly the trigger prefixes the infra wires to ler-intake, so S3 lanes are driven
by real notifications too.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Final

import pytest

from handlers.common.entry import registry
from handlers.lead_enricher.contract import (
    CLEAN,
    DEDUPED,
    ENRICHED,
    JUNK,
    NORMALIZED,
    TRIGGER_PREFIXES,
)
from handlers.lead_enricher.enrich_cache import PendingMarkers
from handlers.lead_enricher.functions import (
    backfill,
    dedupe,
    digest,
    enrich,
    intake,
    junk_writer,
    normalize,
    push,
    retry,
)
from handlers.lead_enricher.functions import filter as junk_filter
from handlers.lead_enricher.lead import Contact, Lead, Screening
from tests.handlers.conftest import FunctionEnv
from testsupport import events
from testsupport.common import FakeBedrockClient
from testsupport.ler import FakeCrm, FakeFirmographics

REGION: Final = "eu-west-2"
ACCOUNT = "123456789012"
SOURCE = "crm.dev.ler"
RAW = f"dev-ler-raw-{ACCOUNT}"
RECORDS = f"dev-ler-records-{ACCOUNT}"
JUNK_BUCKET = f"dev-ler-junk-{ACCOUNT}"
IDENTITY = "dev-ler-identity"
CACHE = "dev-ler-enrich-cache"
JANE = {
    "email": "Jane.Doe@Acme-Widgets.co.uk",
    "name": "jane doe",
    "phone": "07400 123456",
    "company": "Acme Widgets Ltd",
    "message": "Could you send me a quote for 200 widgets?",
}
INTAKE_SECRET = "s3cr3t-intake-token-for-tests"
SENDER = "crm-bot@example.com"
RECIPIENT = "ops@example.com"
RESCUE_KEYRING = json.dumps({"active_kid": "k1", "keys": {"k1": "rescue-link-key-for-tests-" + "r" * 16}})

STAGES: dict[str, Callable[[dict[str, Any], Any], Any]] = {
    NORMALIZED: enrich.handler,
    ENRICHED: dedupe.handler,
    DEDUPED: junk_filter.handler,
    CLEAN: push.handler,
    JUNK: junk_writer.handler,
}
"""detail-type -> the handler its EventBridge rule targets (see the infra's RULES)."""

def context(name: str = "dev-ler-test") -> Any:
    """Enough of a Lambda context for the handlers and Powertools."""
    return SimpleNamespace(
        function_name=name,
        function_version="$LATEST",
        invoked_function_arn=f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}",
        memory_limit_in_mb=256,
        aws_request_id="req-test",
        log_group_name=f"/aws/lambda/{name}",
        log_stream_name="stream",
        get_remaining_time_in_millis=lambda: 600_000,
    )


def url_event(
    body: str,
    *,
    headers: dict[str, str] | None = None,
    method: str = "POST",
    request_id: str = "url-req-1",
) -> dict[str, Any]:
    return events.url_event(body, headers=headers, method=method, request_id=request_id)


def sqs_event(bodies: list[str]) -> dict[str, Any]:
    queue = f"arn:aws:sqs:{REGION}:{ACCOUNT}:dev-ler-intake-queue"
    return events.sqs_event(bodies, queue_arn=queue, receive_count=1)


@dataclass
class Ler:
    """The system on moto, its fakes, and helpers to drive it."""

    clients: dict[str, Any]
    urls: dict[str, str]
    crm: FakeCrm = field(default_factory=FakeCrm)
    provider: FakeFirmographics = field(default_factory=FakeFirmographics)
    bedrock: FakeBedrockClient = field(default_factory=FakeBedrockClient)
    delivered: list[dict[str, Any]] = field(default_factory=list)

    # Driving the lanes --------------------------------------------------------------------

    def post(
        self, payload: dict[str, Any], *, secret: str | None = INTAKE_SECRET, **kw: Any
    ) -> dict[str, Any]:
        headers = {"x-ler-intake-secret": secret} if secret is not None else {}
        headers.update(kw.pop("headers", {}))
        response: dict[str, Any] = intake.handler(
            url_event(json.dumps(payload), headers=headers, **kw), context()
        )
        return response

    def put_raw(self, key: str, body: bytes) -> None:
        self.clients["s3"].put_object(Bucket=RAW, Key=key, Body=body)

    def s3_notifications(self) -> list[dict[str, Any]]:
        """The S3 events ler-raw sent for the trigger prefixes (moto's test event skipped)."""
        found = []
        for message in self._receive(self.urls["notifications"]):
            body = json.loads(message["Body"])
            if "Records" in body:
                found.append(body)
        return found

    def deliver_s3(self) -> list[Any]:
        """Feed every pending ler-raw notification to intake, as S3 would invoke it."""
        return [intake.handler(event, context()) for event in self.s3_notifications()]

    # The chain ----------------------------------------------------------------------------

    def queued(self) -> list[str]:
        """Bodies waiting in ler-intake-queue (received and deleted)."""
        return [m["Body"] for m in self._receive(self.urls["intake"])]

    def normalize(self, bodies: list[str]) -> dict[str, Any]:
        result: dict[str, Any] = normalize.handler(sqs_event(bodies), context())
        return result

    def emitted(self) -> list[dict[str, Any]]:
        """Events put on the default bus with this stack's source since the last call."""
        return [json.loads(m["Body"]) for m in self._receive(self.urls["tap"])]

    def deliver(self, event: dict[str, Any]) -> Any:
        self.delivered.append(event)
        return STAGES[event["detail-type"]](event, context())

    def pump(self, *, rounds: int = 20) -> list[dict[str, Any]]:
        """Run the whole chain until nothing is left: intake queue, then the bus."""
        seen: list[dict[str, Any]] = []
        for _ in range(rounds):
            bodies = self.queued()
            for body in bodies:
                self.normalize([body])
            events = self.emitted()
            if not bodies and not events:
                return seen
            for event in events:
                seen.append(event)
                self.deliver(event)
        raise AssertionError("the chain did not settle")

    # Looking at the results ---------------------------------------------------------------

    def objects(self, bucket: str, prefix: str = "") -> dict[str, dict[str, Any]]:
        s3 = self.clients["s3"]
        found = {}
        for item in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", []):
            body = s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
            found[item["Key"]] = (
                json.loads(body) if item["Key"].endswith(".json") else {"raw": body}
            )
        return found

    def identity(self, id_key: str) -> dict[str, Any] | None:
        item = self.clients["dynamodb"].Table(IDENTITY).get_item(Key={"id_key": id_key}).get("Item")
        return None if item is None else dict(item)

    def seed_identity(self, id_key: str, crm_id: str, **attributes: Any) -> None:
        self.clients["dynamodb"].Table(IDENTITY).put_item(
            Item={
                "id_key": id_key,
                "crm_id": crm_id,
                "updated_at": "2026-01-01T00:00:00+00:00",
                **attributes,
            }
        )

    def sent_mail(self) -> list[Any]:
        from moto.ses.models import ses_backends

        return list(ses_backends[ACCOUNT][REGION].sent_messages)

    def _receive(self, url: str) -> list[dict[str, Any]]:
        sqs = self.clients["sqs"]
        found: list[dict[str, Any]] = []
        while True:
            batch = sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
            ).get("Messages", [])
            if not batch:
                return found
            for message in batch:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            found.extend(batch)


def _queue(sqs: Any, name: str, **attributes: str) -> tuple[str, str]:
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return url, arn


@pytest.fixture
def ler(function_env: FunctionEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ler]:
    """ler on the dev stack's moto world with every ler function's environment from the graph,
    this scenario's secrets, and two taps the stack does not have: a rule copying this stack's
    events to a queue, and ler-raw's notifications for the trigger prefixes to another."""
    from handlers.common.aws_clients import client, table

    env = function_env(
        "ler-intake", "ler-normalize", "ler-enrich", "ler-dedupe", "ler-filter", "ler-push",
        "ler-junk-writer", "ler-retry", "ler-backfill", "ler-digest", "ler-rescue",
    )
    # The handlers' own client cache: one boto3 session, its service models parsed once.
    s3, sqs, events = client("s3", REGION), client("sqs", REGION), client("events", REGION)
    secrets, ses = client("secretsmanager", REGION), client("sesv2", REGION)
    dynamodb = SimpleNamespace(Table=lambda name: table(name, REGION))

    urls = {
        "intake": env["INTAKE_QUEUE_URL"],
        "intake_dlq": env["INTAKE_DLQ_URL"],
        "dlq": env["DLQ_URL"],
    }
    urls["tap"], tap_arn = _queue(sqs, "test-bus-tap")
    urls["notifications"], notifications_arn = _queue(sqs, "test-raw-notifications")
    events.put_rule(Name="test-bus-tap", EventPattern=json.dumps({"source": [SOURCE]}))
    events.put_targets(Rule="test-bus-tap", Targets=[{"Id": "tap", "Arn": tap_arn}])
    s3.put_bucket_notification_configuration(
        Bucket=RAW,
        NotificationConfiguration={
            "QueueConfigurations": [
                {
                    "QueueArn": notifications_arn,
                    "Events": ["s3:ObjectCreated:*"],
                    "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": prefix}]}},
                }
                for prefix in TRIGGER_PREFIXES
            ]
        },
    )
    for variable, value in (
        ("INTAKE_SECRET_ID", INTAKE_SECRET),
        ("ENRICHMENT_SECRET_ID", "enrichment-key"),
        ("CRM_SECRET_ID", "crm-token"),
        ("RESCUE_KEY_SECRET_ID", RESCUE_KEYRING),
    ):
        secrets.put_secret_value(SecretId=env[variable], SecretString=value)

    world = Ler(
        clients={"s3": s3, "sqs": sqs, "events": events, "dynamodb": dynamodb, "ses": ses},
        urls=urls,
    )
    monkeypatch.setattr(
        "handlers.common.model_call.bedrock_runtime", lambda region=None: world.bedrock
    )
    registry.override(enrich, provider=world.provider)
    registry.override(push, crm=world.crm)
    registry.override(backfill, syncer=InProcessSyncer())
    yield world


class InProcessSyncer:
    """ler-backfill's synchronous invoke of ler-push, made in-process."""

    def sync_page(self, after: str | None) -> dict[str, Any]:
        answer: dict[str, Any] = push.handler(
            {"action": "resync_page", "after": after, "limit": 2}, context()
        )
        return answer


@dataclass
class Clock:
    """A settable clock for the services that take one."""

    now: dt.datetime

    def __call__(self) -> dt.datetime:
        return self.now


@dataclass
class RecordingInvoker:
    """ler-retry's asynchronous invoke of ler-intake, recorded (moto's Lambda needs Docker)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def invoke_async(self, function_name: str, payload: dict[str, Any]) -> None:
        self.calls.append((function_name, payload))


@pytest.fixture
def invoker(monkeypatch: pytest.MonkeyPatch) -> RecordingInvoker:
    recorded = RecordingInvoker()
    registry.override(retry, invoker=recorded)
    return recorded


__all__ = ["Ler", "backfill", "context", "digest", "sqs_event", "url_event"]


# Leads the job tests share (ler-junk-writer and ler-digest; ler-retry and ler-backfill) ----------

NOW = dt.datetime(2026, 11, 28, 10, 0, tzinfo=dt.UTC)


def junk_lead(lead_id: str, reason: str, received: str = "2026-11-27T23:59:00+00:00") -> Lead:
    return Lead(
        lead_id=lead_id,
        lane="form",
        received_at=received,
        contact=Contact(email=f"{lead_id}@spam.example"),
        message="Buy backlinks now",
        screening=Screening(decision="junk", reason=reason),
    )


def event(detail_type: str, lead: Lead) -> dict[str, Any]:
    return {
        "version": "0",
        "id": f"evt-{lead.lead_id}",
        "detail-type": detail_type,
        "source": "crm.dev.ler",
        "account": "123456789012",
        "time": "2026-11-28T10:00:00Z",
        "region": "eu-west-2",
        "resources": [],
        "detail": lead.to_json(),
    }


def mark_pending(pass_no: int, updated: dt.datetime, lead_id: str = "f-1") -> None:
    lead = Lead(
        lead_id=lead_id,
        lane="form",
        received_at=NOW.isoformat(),
        contact=Contact(email="a@acme.co.uk"),
        pass_no=pass_no,
    )
    PendingMarkers(CACHE).mark(lead, "provider down", updated)
