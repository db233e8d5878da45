"""WorkQueue: an SQS queue with its dead-letter queue, encrypted, reachable over TLS only.

Either a work queue (with a DLQ after ``max_receive_count`` receives) or a standalone
dead-letter queue (``dead_letter=True``) that other paths (EventBridge targets, Lambda
on-failure destinations) send to. AWS services that send to it are named with the ARN of the
one source they act for, so the queue policy never trusts a whole service.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components.deployment import Deployment
from components.grants import Grant
from components.monitoring import declare_alarm, queue_age, queue_depth
from components.personal_data import Holding, component_inputs, tags

SEND_ACTIONS = ("sqs:SendMessage",)
DEAD_LETTER_OF_TAG = "crm:dead-letter-of"
EVENT_SOURCE_ACTIONS = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
"""Exactly what an SQS event source mapping's function role needs (Lambda Developer Guide,
"Using Lambda with Amazon SQS", execution role permissions; ``AWSLambdaSQSQueueExecutionRole``):
https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html"""
CONSUME_ACTIONS = (
    "sqs:ReceiveMessage",
    "sqs:DeleteMessage",
    "sqs:ChangeMessageVisibility",
    "sqs:GetQueueAttributes",
)


@dataclass(frozen=True)
class ServiceSender:
    """An AWS service allowed to send, for one source ARN (e.g. one EventBridge rule)."""

    service: str
    source_arn: str


VISIBILITY_PER_CONSUMER_TIMEOUT = 6
"""AWS Lambda Developer Guide, "Using Lambda with Amazon SQS" (configuring a queue): "set the
source queue's visibility timeout to at least six times the timeout that you configure on your
function", so a batch retried after throttling is not received twice.
https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html"""


def consumer_visibility(consumer_timeout_s: int) -> int:
    """The visibility timeout of a queue a function with this timeout consumes.

    The one place the rule lives; the queue trigger checks it (components/scoped_lambda.py).
    """
    return VISIBILITY_PER_CONSUMER_TIMEOUT * consumer_timeout_s


@dataclass(frozen=True)
class WorkQueueArgs:
    """Arguments of :class:`WorkQueue`.

    Attributes:
        deployment: Where the queue lives.
        name: The document's queue name (physical name ``<prefix>-<name>``).
        dead_letter_name: Name of the DLQ created beside it; default ``<name>-dlq``.
        max_receive_count: Receives before a message moves to the DLQ (from the document).
        visibility_timeout_s: For a consumed queue, ``consumer_visibility(consumer timeout)``.
        dead_letter: This queue IS a dead-letter queue: no DLQ of its own, 14-day retention.
        service_senders: AWS services that may send, each for one source ARN.
        max_age_s: Alarm when the oldest message of a work queue is older than this; default
            ``max_receive_count`` x ``visibility_timeout_s``, the time a message needs to use
            up its receives, so an older one means the consumer stopped receiving.
        dead_letter_of: For a dead-letter queue that a handler names at run time (schedules
            a function creates), what sends to it; tagged ``crm:dead-letter-of`` so the policy
            pack knows it is a dead-letter target although no declared resource names it (tag
            characters only: letters, digits, spaces and _ . : / = + - @; see tag-values).
        personal_data: What its messages (and its DLQ's) hold about people
            (components/personal_data.py); None only for a queue this program does not map.
    """

    deployment: Deployment
    name: str
    dead_letter_name: str | None = None
    max_receive_count: int = 5
    visibility_timeout_s: int = 60
    dead_letter: bool = False
    service_senders: Sequence[ServiceSender] = field(default_factory=tuple)
    message_retention_s: int = 4 * 24 * 3600
    max_age_s: int | None = None
    dead_letter_of: str = ""
    personal_data: Holding | None = field(kw_only=True)


class WorkQueue(pulumi.ComponentResource):
    """An SQS queue plus DLQ, SSE and a TLS-only queue policy."""

    queue: aws.sqs.Queue
    dlq: aws.sqs.Queue | None
    queue_url: pulumi.Output[str]

    def __init__(
        self, resource_name: str, args: WorkQueueArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(
            "crm:index:WorkQueue", resource_name, component_inputs(args.personal_data), opts
        )
        if args.dead_letter_of and not args.dead_letter:
            raise ValueError(f"queue {args.name}: dead_letter_of is for dead-letter queues")
        d = args.deployment
        self.args = args
        self.physical_name = d.name(args.name)
        self.arn = d.arns.queue(self.physical_name)
        self.url = d.arns.queue_url(self.physical_name)

        self.dlq = None
        redrive: str | None = None
        if not args.dead_letter:
            dlq_seed = args.dead_letter_name or f"{args.name}-dlq"
            dlq_name = d.name(dlq_seed)
            self.dlq = aws.sqs.Queue(
                f"{resource_name}-dlq",
                name=dlq_name,
                sqs_managed_sse_enabled=True,
                message_retention_seconds=14 * 24 * 3600,
                redrive_allow_policy=json.dumps(
                    {"redrivePermission": "byQueue", "sourceQueueArns": [self.arn]}
                ),
                tags=d.resource_tags(**{"crm:queue": dlq_seed}, **tags(args.personal_data)),
                opts=pulumi.ResourceOptions(parent=self),
            )
            self._tls_only(f"{resource_name}-dlq", dlq_name, d.arns.queue(dlq_name), [], self.dlq)
            redrive = json.dumps(
                {
                    "deadLetterTargetArn": d.arns.queue(dlq_name),
                    "maxReceiveCount": args.max_receive_count,
                }
            )
            self.dlq_arn: str | None = d.arns.queue(dlq_name)
        else:
            self.dlq_arn = None

        self.queue = aws.sqs.Queue(
            resource_name,
            name=self.physical_name,
            sqs_managed_sse_enabled=True,
            visibility_timeout_seconds=args.visibility_timeout_s,
            message_retention_seconds=14 * 24 * 3600
            if args.dead_letter
            else args.message_retention_s,
            redrive_policy=redrive,
            tags=d.resource_tags(
                **{"crm:queue": args.name},
                **({DEAD_LETTER_OF_TAG: args.dead_letter_of} if args.dead_letter_of else {}),
                **tags(args.personal_data),
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.dlq] if self.dlq else None),
        )
        self._tls_only(
            resource_name, self.physical_name, self.arn, list(args.service_senders), self.queue
        )
        self.queue_url = self.queue.url
        self.alarms = self._alarms(resource_name)
        self.register_outputs({"queue_url": self.queue_url, "queue_arn": self.queue.arn})

    @property
    def dead_letter_name(self) -> str:
        """Physical name of the queue where this queue's failures end (itself for a DLQ)."""
        if self.args.dead_letter:
            return self.physical_name
        return self.args.deployment.name(self.args.dead_letter_name or f"{self.args.name}-dlq")

    def _alarms(self, resource_name: str) -> list[aws.cloudwatch.MetricAlarm]:
        """Messages in the dead-letter queue; for a work queue also its oldest message's age."""
        d, args = self.args.deployment, self.args
        tags = d.resource_tags(**{"crm:queue": args.name})
        dlq = self.dead_letter_name
        registry = d.monitoring.registry
        alarms = [
            declare_alarm(
                f"{resource_name}-dlq-depth-alarm",
                f"{dlq}-depth",
                queue_depth(dlq),
                f"Messages in {dlq}",
                d.monitoring,
                tags,
                self,
            )
        ]
        registry.queue(d.system, dlq, d.region, dead_letter=True)
        if not args.dead_letter:
            registry.queue(d.system, self.physical_name, d.region, dead_letter=False)
            max_age = args.max_age_s or args.max_receive_count * args.visibility_timeout_s
            alarms.append(
                declare_alarm(
                    f"{resource_name}-age-alarm",
                    f"{self.physical_name}-oldest-age",
                    queue_age(self.physical_name, max_age),
                    f"Oldest message of {self.physical_name} older than {max_age} s",
                    d.monitoring,
                    tags,
                    self,
                )
            )
        return [a for a in alarms if a is not None]

    def _tls_only(
        self,
        resource_name: str,
        physical_name: str,
        arn: str,
        senders: list[ServiceSender],
        queue: aws.sqs.Queue,
    ) -> None:
        statements: list[dict[str, Any]] = [
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:*",
                "Resource": arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        ]
        for i, sender in enumerate(senders):
            statements.append(
                {
                    "Sid": f"AllowServiceSend{i}",
                    "Effect": "Allow",
                    "Principal": {"Service": sender.service},
                    "Action": "sqs:SendMessage",
                    "Resource": arn,
                    "Condition": {"ArnEquals": {"aws:SourceArn": sender.source_arn}},
                }
            )
        aws.sqs.QueuePolicy(
            f"{resource_name}-policy",
            queue_url=self.args.deployment.arns.queue_url(physical_name),
            policy=json.dumps({"Version": "2012-10-17", "Statement": statements}, sort_keys=True),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[queue]),
        )

    # Grants -------------------------------------------------------------------------------

    def grant_send(self, *, sid: str | None = None) -> Grant:
        """SendMessage to this queue."""
        return Grant(sid or f"{self._sid()}Send", SEND_ACTIONS, (self.arn,))

    def grant_consume(self, *, sid: str | None = None) -> Grant:
        """Receive, delete and change visibility: what an SQS event source needs."""
        return Grant(sid or f"{self._sid()}Consume", CONSUME_ACTIONS, (self.arn,))

    def grant_event_source(self, *, sid: str | None = None) -> Grant:
        """What Lambda's poller needs to feed a function from this queue (nothing more)."""
        return Grant(sid or f"{self._sid()}EventSource", EVENT_SOURCE_ACTIONS, (self.arn,))

    def _sid(self) -> str:
        return "".join(part.capitalize() for part in self.args.name.split("-"))
