"""queue-hygiene: every SQS queue has a dead-letter path, encryption and a TLS-only policy.

What: each SQS queue, matched by its explicit ``name``,
- has a ``redrivePolicy`` whose ``deadLetterTargetArn`` names a queue of this stack (and a
  positive ``maxReceiveCount``), or is itself a dead-letter target: of another queue's redrive
  policy, an EventBridge target's or a schedule's ``deadLetterConfig``, a Lambda on-failure
  destination (event invoke config, event source mapping) or a function's
  ``deadLetterConfig``, or tagged ``crm:dead-letter-of`` naming the run-time resources that
  send to it (rrs-webhook's per-request schedules, created by the handler);
- is encrypted (``sqsManagedSseEnabled`` true or a ``kmsMasterKeyId``);
- has a resource policy (a QueuePolicy whose ``queueUrl`` ends with its name, or its own
  ``policy``) with a Deny of ``sqs:*`` to everyone when ``aws:SecureTransport`` is false.

Why: "a dead-letter queue on every asynchronous path" (001), "rrs-work-dlq ... after five
attempts" (004): a message that fails forever must land somewhere a person looks, not vanish
or loop. Queues carry customer data, so they are encrypted and refuse plaintext transport.

Fix: use ``WorkQueue`` (queue + DLQ + SSE + TLS-only policy); a standalone DLQ is a WorkQueue
with ``dead_letter=True`` wired as the failure destination of its source.
"""

from __future__ import annotations

import json
from typing import Any, Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.documents import documents_in, is_tls_deny
from policies.common.graph import Node, Stack, queue_name_of_arn, queue_name_of_url
from policies.common.props import as_str, get_path, is_unknown
from policies.common.rule import stack_policy

NAME: Final = "queue-hygiene"
QUEUE: Final = "aws:sqs/queue:Queue"
QUEUE_POLICY: Final = "aws:sqs/queuePolicy:QueuePolicy"
DEAD_LETTER_OF_TAG: Final = "crm:dead-letter-of"
"""Tag of a dead-letter queue that only run-time resources name (a handler's schedules)."""

DEAD_LETTER_REFERENCES: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "aws:cloudwatch/eventTarget:EventTarget": (("deadLetterConfig", "arn"),),
    "aws:scheduler/schedule:Schedule": (("target", "deadLetterConfig", "arn"),),
    "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig": (
        ("destinationConfig", "onFailure", "destination"),
    ),
    "aws:lambda/eventSourceMapping:EventSourceMapping": (
        ("destinationConfig", "onFailure", "destinationArn"),
    ),
    "aws:lambda/function:Function": (("deadLetterConfig", "targetArn"),),
}
"""Where other resources name a queue as their dead-letter / failure destination."""


def _redrive(value: Any) -> tuple[dict[str, Any] | None, str | None]:
    if value is None or value == "":
        return None, None
    if is_unknown(value):
        return None, "redrivePolicy is unknown at preview: cannot be judged"
    decoded = value
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            return None, "redrivePolicy is not valid JSON"
    if not isinstance(decoded, dict):
        return None, "redrivePolicy is not a JSON object"
    return decoded, None


def dead_letter_targets(stack: Stack) -> set[str]:
    """Names of the queues something names as its dead-letter / failure destination."""
    targets: set[str] = set()
    for node in stack.of_type(QUEUE):
        tags = node.props.get("tags")
        # Named at run time (schedules a handler creates), declared by the tag.
        declared = isinstance(tags, dict) and as_str(tags.get(DEAD_LETTER_OF_TAG))
        if declared and (name := as_str(node.props.get("name"))):
            targets.add(name)
        policy, _ = _redrive(node.props.get("redrivePolicy"))
        if policy and (name := queue_name_of_arn(policy.get("deadLetterTargetArn"))):
            targets.add(name)
    for resource_type, paths in DEAD_LETTER_REFERENCES.items():
        for node in stack.of_type(resource_type):
            for path in paths:
                if name := queue_name_of_arn(get_path(node.props, *path)):
                    targets.add(name)
    return targets


def _check_queue(
    node: Node, name: str, names: set[str], targets: set[str], tls: set[str]
) -> list[str]:
    problems: list[str] = []
    policy, error = _redrive(node.props.get("redrivePolicy"))
    if error:
        problems.append(error)
    elif policy is not None:
        target = queue_name_of_arn(policy.get("deadLetterTargetArn"))
        count = policy.get("maxReceiveCount")
        if target is None:
            problems.append("redrivePolicy has no deadLetterTargetArn naming an SQS queue")
        elif target not in names:
            problems.append(f"its dead-letter queue {target} is not declared in this stack")
        if isinstance(count, str) and count.isdigit():
            count = int(count)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            problems.append(f"redrivePolicy maxReceiveCount {count!r} is not a positive integer")
    elif name not in targets:
        problems.append(
            "has no dead-letter queue (redrivePolicy) and is no one's dead-letter target"
        )
    sse = node.props.get("sqsManagedSseEnabled") is True or bool(
        as_str(node.props.get("kmsMasterKeyId"))
    )
    if not sse:
        problems.append("is not encrypted (sqsManagedSseEnabled or kmsMasterKeyId)")
    if name not in tls:
        problems.append("has no queue policy denying sqs:* when aws:SecureTransport is false")
    return problems


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    queues = stack.of_type(QUEUE)
    names = {n for q in queues if (n := as_str(q.props.get("name")))}
    targets = dead_letter_targets(stack)
    tls: set[str] = set()
    for doc in documents_in(args.resources):
        if doc.resource_type == QUEUE_POLICY:
            queue = queue_name_of_url(doc.props.get("queueUrl"))
        elif doc.resource_type == QUEUE:
            queue = as_str(doc.props.get("name"))
        else:
            continue
        if queue and any(is_tls_deny(st, "sqs") for st in doc.statements):
            tls.add(queue)
    for node in queues:
        name = as_str(node.props.get("name"))
        if name is None:
            report(f"SQS queue {node.name} has no explicit name (a known string)", node.urn)
            continue
        for problem in _check_queue(node, name, names, targets, tls):
            report(f"SQS queue {name} {problem}", node.urn)


POLICY: Final = stack_policy(
    NAME,
    "Every SQS queue has a DLQ (or is one), server-side encryption and a TLS-only queue policy.",
    _validate,
    remediation="Build queues with WorkQueue: DLQ, sqs_managed_sse_enabled and a TLS-only policy.",
)
