"""Re-driving (ler-retry, every 15 minutes): the dead letters, pending enrichments, an alert.

1. ler-dlq: chain events go back on the bus, S3 notifications back to ler-intake, schedule
   inputs are dropped (the schedule runs again); ler-intake-queue's dead letters go back to
   that queue. Each letter carries a re-drive count; after ``MAX_REDRIVES`` it is parked
   (hidden for 12 hours, left for a human) instead of cycling forever.
2. Leads marked enrichment_pending re-enter the chain as le.normalized with the next pass,
   up to the configured number of passes (ler-backfill takes the rest overnight).
3. When letters were parked or the queues still hold a backlog, one alert email goes out.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from handlers.common.aws_clients import client
from handlers.common.observability import get_logger
from handlers.lead_enricher.contract import EVENT_BUS, NORMALIZED, RetrySettings
from handlers.lead_enricher.dead_letters import DeadLetter, classify
from handlers.lead_enricher.enrich_cache import PendingMarkers
from handlers.lead_enricher.events import EventBridgeSink
from handlers.lead_enricher.mailer import Mailer

PARK_SECONDS = 12 * 3600 - 300
"""SQS caps a message's total visibility timeout at 12 hours from its receive."""
COOL_DOWN = dt.timedelta(minutes=10)
"""A pending lead touched this recently may still be in flight: leave it for the next run."""
SAFETY_MS = 20_000


class Invoker(Protocol):
    def invoke_async(self, function_name: str, payload: dict[str, Any]) -> None: ...


class LambdaInvoker:
    """Asynchronous Invoke (the function's own retries and on-failure destination apply)."""

    def __init__(self, client: Any = None) -> None:
        self._client = client

    def invoke_async(self, function_name: str, payload: dict[str, Any]) -> None:
        if self._client is None:
            self._client = client("lambda")
        self._client.invoke(
            FunctionName=function_name,
            InvocationType="Event",
            Payload=json.dumps(payload).encode("utf-8"),
        )


@dataclass
class RetryReport:
    redriven: int = 0
    dropped: int = 0
    parked: list[str] = field(default_factory=list)
    pending_retried: int = 0
    backlog: int = 0
    alerted: bool = False


class RetryJob:
    def __init__(
        self,
        config: RetrySettings,
        *,
        sqs: Any = None,
        sink: EventBridgeSink | None = None,
        invoker: Invoker | None = None,
        pending: PendingMarkers | None = None,
        mailer: Mailer | None = None,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.config = config
        self._sqs = sqs
        self.sink = sink or EventBridgeSink(config.event_source, EVENT_BUS)
        self.invoker = invoker or LambdaInvoker()
        self.pending = pending or PendingMarkers(config.cache_table)
        self.mailer = mailer or Mailer(config.sender_email)
        self.clock = clock

    @property
    def sqs(self) -> Any:
        if self._sqs is None:
            self._sqs = client("sqs")
        return self._sqs

    def run(self, time_left_ms: Callable[[], int] = lambda: 10**9) -> RetryReport:
        report = RetryReport()
        self._drain(self.config.dlq_url, False, report, time_left_ms)
        self._drain(self.config.intake_dlq_url, True, report, time_left_ms)
        report.pending_retried = self.retry_pending()
        report.backlog = sum(
            self._visible(url) for url in (self.config.dlq_url, self.config.intake_dlq_url)
        )
        if report.parked or report.backlog >= self.config.dlq_alert_threshold:
            self._alert(report)
            report.alerted = True
        return report

    # Dead letters --------------------------------------------------------------------------

    def _drain(
        self, url: str, intake_queue: bool, report: RetryReport, time_left_ms: Callable[[], int]
    ) -> None:
        while time_left_ms() > SAFETY_MS:
            answer = self.sqs.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=10,
                WaitTimeSeconds=0,
                MessageAttributeNames=["All"],
            )
            messages = answer.get("Messages") or []
            if not messages:
                return
            for message in messages:
                rule = ((message.get("MessageAttributes") or {}).get("RULE_ARN") or {}).get(
                    "StringValue", ""
                )
                letter = classify(message["Body"], intake_queue=intake_queue, origin=rule)
                if letter.kind == "unknown" or letter.exhausted:
                    self.sqs.change_message_visibility(
                        QueueUrl=url,
                        ReceiptHandle=message["ReceiptHandle"],
                        VisibilityTimeout=PARK_SECONDS,
                    )
                    report.parked.append(f"{letter.kind} from {letter.origin or url}")
                    continue
                if letter.kind == "scheduled":
                    report.dropped += 1
                else:
                    self._redrive(letter)
                    report.redriven += 1
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])

    def _redrive(self, letter: DeadLetter) -> None:
        if letter.kind == "event":
            self.sink.publish_raw(str(letter.payload["detail-type"]), letter.payload["detail"])
        elif letter.kind == "s3":
            self.invoker.invoke_async(self.config.intake_function_name, letter.payload)
        elif letter.kind == "lead":
            self.sqs.send_message(
                QueueUrl=self.config.intake_queue_url,
                MessageBody=json.dumps(letter.payload, separators=(",", ":")),
            )
        get_logger().info("dead letter re-driven", kind=letter.kind, redrives=letter.redrives + 1)

    def _visible(self, url: str) -> int:
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
        ).get("Attributes", {})
        return int(attributes.get("ApproximateNumberOfMessages", 0))

    # Pending enrichments -------------------------------------------------------------------

    def retry_pending(self) -> int:
        """Send each pending lead (below the pass budget, not touched recently) round again."""
        now = self.clock()
        retried = 0
        for waiting in self.pending.pending():
            if waiting.pass_no + 1 >= self.config.max_retry_passes:
                continue  # ler-backfill's job now
            updated = dt.datetime.fromisoformat(waiting.updated_at) if waiting.updated_at else now
            if now - updated < COOL_DOWN:
                continue
            if waiting.retry_at and now < dt.datetime.fromisoformat(waiting.retry_at):
                continue  # the provider's 429 asked for a longer wait (an hour, a day)
            self.sink.publish(NORMALIZED, waiting.next_pass())
            retried += 1
        return retried

    def _alert(self, report: RetryReport) -> None:
        lines = [
            f"Dead letters parked this run: {len(report.parked)}",
            *(f"  - {what}" for what in report.parked[:20]),
            f"Messages still waiting in ler-dlq and the intake dead-letter queue: {report.backlog}",
            f"Re-driven this run: {report.redriven}",
            "Parked letters reappear in about 12 hours; inspect them in the SQS console.",
        ]
        self.mailer.send(
            self.config.alert_recipient, "Lead enricher: dead letters need attention", "\n".join(lines)
        )
