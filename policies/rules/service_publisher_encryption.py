"""service-publisher-encryption: a topic or queue AWS services publish to is under a key they may use.

What: for every SNS topic and SQS queue of the stack that an AWS service principal publishes or
sends to - found from its topic / queue policy (an Allow of ``sns:Publish`` /
``sqs:SendMessage`` to a service principal) or from being a budget's subscriber, a CloudWatch
alarm's action, an EventBridge target or dead-letter queue, or an S3 / SES notification
target - its ``kmsMasterKeyId`` is either absent (unencrypted, or SQS-managed SSE) or names a
customer-managed key declared in this stack whose key policy has an Allow for that service
principal of ``kms:GenerateDataKey*`` (or ``kms:GenerateDataKey``) and ``kms:Decrypt``, with a
source condition (``aws:SourceAccount`` and/or ``aws:SourceArn``). An AWS-managed key
(``alias/aws/sns``, ``alias/aws/sqs``) is refused for those, and so is a key the stack does not
declare (its policy cannot be judged). The key is found from the alias in ``kmsMasterKeyId``:
the key tagged ``crm:kms-alias`` with it (``components.alert_topic`` tags its keys so, because
a key's id and ARN are unknown until it exists, and the join must hold at preview).

Why: the publishing service asks KMS for a data key as itself. Amazon SNS Developer Guide,
"Managing Amazon SNS encryption keys and costs", "Enable compatibility between event sources
from AWS services and encrypted topics"
(https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services):
the topic must use a customer-managed key whose policy grants the service principal
``kms:GenerateDataKey*`` and ``kms:Decrypt``; an AWS-managed key's policy cannot be changed,
so AWS services cannot publish to a topic under it. The SQS equivalent: Amazon SQS Developer
Guide, "Configuring KMS permissions for AWS services"
(https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html).
The publish is dropped: the budget alarm never arrives (issue 12, defect 3).

Fix: use ``components.alert_topic.AlertTopic`` (a customer-managed key per topic admitting its
publishers), or leave the queue on SQS-managed SSE.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.documents import Statement, parse_statements, principals, scoping_keys
from policies.common.graph import Node, Stack
from policies.common.props import as_str, is_unknown, string_map
from policies.common.rule import stack_policy
from policies.common.service_access import (
    PUBLISH_ACTIONS,
    QUEUE,
    TOPIC,
    deliveries,
    service_admissions,
)

NAME: Final = "service-publisher-encryption"
KEY: Final = "aws:kms/key:Key"
KEY_ALIAS_TAG: Final = "crm:kms-alias"


def _publishers(args: StackValidationArgs) -> dict[tuple[str, str], set[str]]:
    """(kind, name) of each topic/queue -> the AWS service principals that publish to it."""
    found: dict[tuple[str, str], set[str]] = {}
    for admission in service_admissions(args.resources):
        if admission.kind in ("topic", "queue") and admission.admits(
            PUBLISH_ACTIONS[admission.kind]
        ):
            found.setdefault((admission.kind, admission.target), set()).add(admission.service)
    for delivery in deliveries(args.resources):
        if delivery.kind in ("topic", "queue"):
            found.setdefault((delivery.kind, delivery.target), set()).add(delivery.service)
    return found


def _keys(stack: Stack) -> dict[str, Node]:
    """Declared keys by the alias they are tagged with (the key id is unknown at preview)."""
    by_alias: dict[str, Node] = {}
    for key in stack.of_type(KEY):
        if alias := as_str(string_map(key.props.get("tags")).get(KEY_ALIAS_TAG)):
            by_alias[alias] = key
    return by_alias


def _key_statements(key: Node) -> tuple[tuple[Statement, ...], str | None]:
    policy = key.props.get("policy")
    if is_unknown(policy) or not isinstance(policy, str):
        return (), "has no key policy known at preview"
    try:
        statements, error, _ = parse_statements(json.loads(policy))
    except json.JSONDecodeError:
        return (), "has a key policy that is not valid JSON"
    return statements, error


def key_admits(statements: tuple[Statement, ...], service: str) -> str | None:
    """Why the key policy does not let ``service`` encrypt for the topic; None when it does."""
    admitting = [
        st
        for st in statements
        if st.is_allow and service in principals(st.principal).get("Service", [])
    ]
    if not admitting:
        return f"does not admit {service}"
    generates = any(
        st.covers_action("kms:GenerateDataKey")
        or st.covers_action("kms:GenerateDataKeyWithoutPlaintext")
        for st in admitting
    )
    decrypts = any(st.covers_action("kms:Decrypt") for st in admitting)
    if not (generates and decrypts):
        return f"does not let {service} kms:GenerateDataKey* and kms:Decrypt"
    if not any(
        st.covers_action("kms:Decrypt")
        and {"aws:sourceaccount", "aws:sourcearn"} & scoping_keys(st.condition)
        for st in admitting
    ):
        return f"admits {service} without an aws:SourceAccount / aws:SourceArn condition"
    return None


def _judge(node: Node, kind: str, services: set[str], keys: Mapping[str, Node]) -> list[str]:
    key_id = node.props.get("kmsMasterKeyId")
    if key_id is None or key_id == "":
        return []
    label = "SNS topic" if kind == "topic" else "SQS queue"
    name = as_str(node.props.get("name")) or node.name
    head = f"{label} {name} is published to by {', '.join(sorted(services))}"
    reference = as_str(key_id)
    if reference is None:
        return [f"{head}, but its kmsMasterKeyId is unknown at preview: cannot be judged"]
    if reference.startswith("alias/aws/") or ":alias/aws/" in reference:
        return [
            f"{head}, but is encrypted with the AWS-managed key {reference}, whose policy "
            "cannot admit them: every publish fails (SNS developer guide, encryption for "
            "AWS-service event sources); use a customer-managed key or no KMS key"
        ]
    key = keys.get(reference) or keys.get(reference.rsplit(":", 1)[-1])
    if key is None:
        return [
            f"{head}, but its key {reference} is not a key declared in this stack: its policy "
            "cannot be checked to admit them"
        ]
    statements, error = _key_statements(key)
    if error:
        return [f"{head}, but its key {reference} {error}"]
    return [
        f"{head}, but the key policy of {reference} {problem}"
        for service in sorted(services)
        if (problem := key_admits(statements, service))
    ]


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    keys = _keys(stack)
    publishers = _publishers(args)
    for kind, resource_type in (("topic", TOPIC), ("queue", QUEUE)):
        for node in stack.of_type(resource_type):
            name = as_str(node.props.get("name"))
            services = publishers.get((kind, name or ""))
            if not services:
                continue
            for problem in _judge(node, kind, services, keys):
                report(problem, node.urn)


POLICY: Final = stack_policy(
    NAME,
    "Topics and queues that AWS services publish to are unencrypted or under a customer-managed "
    "key whose policy admits those services with a source condition.",
    _validate,
    remediation=(
        "Build the topic with components.alert_topic.AlertTopic (customer-managed key admitting "
        "its publishers), or use SQS-managed SSE; never alias/aws/sns or alias/aws/sqs."
    ),
)
