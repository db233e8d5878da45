"""creation-order: what AWS validates at creation waits for the permission it validates.

What: three AWS APIs check a permission when the resource is created, so the resource must
depend (directly or through other resources, as the engine records it: explicit
``depends_on`` and inputs taken from outputs) on the resource granting that permission:

- an SES receipt rule with an S3 action waits for the bucket policy of that bucket;
- an S3 bucket notification waits for each Lambda permission (principal
  ``s3.amazonaws.com``) of the functions it notifies, and for the queue or topic policy of
  each queue or topic it notifies;
- a Lambda event source mapping waits for the inline role policies of its function's role;
- a budget waits for the topic policy of each topic its notifications go to.

Why: Pulumi creates independent resources in parallel, so without the dependency the first
``pulumi up`` races, and loses some of the time:
- ``CreateReceiptRule`` answers ``InvalidS3Configuration`` when SES cannot write the bucket
  (Amazon SES API Reference, CreateReceiptRule,
  https://docs.aws.amazon.com/ses/latest/APIReference/API_CreateReceiptRule.html);
- ``PutBucketNotificationConfiguration`` sends a test message and answers "Unable to validate
  the following destination configurations" when a destination refuses S3 (Amazon S3 User
  Guide, "Granting permissions to publish event notification messages to a destination",
  https://docs.aws.amazon.com/AmazonS3/latest/userguide/grant-destinations-permissions-to-s3.html);
- ``CreateEventSourceMapping`` checks the execution role and answers "The provided execution
  role does not have permissions to call ReceiveMessage on SQS" (or the stream reads) when it
  lacks them (Lambda Developer Guide, "Using Lambda with Amazon SQS",
  https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html);
- Budgets refuses a subscriber topic it is not authorized to publish to (AWS Cost Management
  User Guide, "Creating an Amazon SNS topic for budget notifications", its error messages,
  https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-sns-policy.html).

Fix: the blocks declare these dependencies (``InboundMailLaneArgs.bucket_ready``,
``ScopedLambda``'s bucket trigger and event sources); a resource declared by hand needs
``depends_on`` on the policy.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.documents import as_list, role_name_of
from policies.common.graph import Stack, lambda_name, queue_name_of_arn, queue_name_of_url
from policies.common.props import as_str, get_path
from policies.common.rule import stack_policy
from policies.common.service_access import (
    BUCKET_NOTIFICATION,
    BUCKET_POLICY,
    BUDGET,
    PERMISSION,
    QUEUE_POLICY,
    RECEIPT_RULE,
    TOPIC_POLICY,
    name_of_topic_arn,
)

NAME: Final = "creation-order"
MAPPING: Final = "aws:lambda/eventSourceMapping:EventSourceMapping"
ROLE_POLICY: Final = "aws:iam/rolePolicy:RolePolicy"


def _waits_for(resource: Any) -> set[str]:
    """URNs ``resource`` waits for, transitively."""
    seen: set[str] = set()
    todo = list(getattr(resource, "dependencies", None) or [])
    while todo:
        dep = todo.pop()
        if dep.urn in seen:
            continue
        seen.add(dep.urn)
        todo.extend(getattr(dep, "dependencies", None) or [])
    return seen


def _missing(resource: Any, needed: Iterable[tuple[str, str]]) -> list[str]:
    waits = _waits_for(resource)
    return [label for urn, label in dict.fromkeys(needed) if urn not in waits]


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    resources = list(args.resources)
    by_urn = {r.urn: r for r in resources}
    stack = Stack(resources)

    def keyed(resource_type: str, key: Any) -> dict[str, list[tuple[str, str]]]:
        found: dict[str, list[tuple[str, str]]] = {}
        for node in stack.of_type(resource_type):
            if name := key(node.props):
                found.setdefault(name, []).append(
                    (node.urn, f"{node.resource_type.rsplit(':', 1)[-1]} {node.name}")
                )
        return found

    bucket_policies = keyed(BUCKET_POLICY, lambda p: as_str(p.get("bucket")))
    queue_policies = keyed(QUEUE_POLICY, lambda p: queue_name_of_url(p.get("queueUrl")))
    topic_policies = keyed(TOPIC_POLICY, lambda p: name_of_topic_arn(p.get("arn")))
    s3_permissions = keyed(
        PERMISSION,
        lambda p: (
            lambda_name(p.get("function")) if p.get("principal") == "s3.amazonaws.com" else None
        ),
    )
    role_policies = keyed(ROLE_POLICY, lambda p: role_name_of(p.get("role")))

    for node in stack.of_type(RECEIPT_RULE):
        writers = [
            item
            for action in as_list(node.props.get("s3Actions"))
            for item in bucket_policies.get(as_str(get_path(action, "bucketName")) or "", [])
        ]
        for label in _missing(by_urn[node.urn], writers):
            report(
                f"SES receipt rule {node.name} does not wait for {label}: CreateReceiptRule "
                "refuses the rule (InvalidS3Configuration) until SES may write the bucket",
                node.urn,
            )
    for node in stack.of_type(BUCKET_NOTIFICATION):
        needed: list[tuple[str, str]] = []
        for entry in as_list(node.props.get("lambdaFunctions")):
            needed += s3_permissions.get(
                lambda_name(get_path(entry, "lambdaFunctionArn")) or "", []
            )
        for entry in as_list(node.props.get("queues")):
            needed += queue_policies.get(queue_name_of_arn(get_path(entry, "queueArn")) or "", [])
        for entry in as_list(node.props.get("topics")):
            needed += topic_policies.get(name_of_topic_arn(get_path(entry, "topicArn")) or "", [])
        for label in _missing(by_urn[node.urn], needed):
            report(
                f"S3 bucket notification {node.name} does not wait for {label}: S3 tests each "
                "destination and refuses the configuration while it cannot deliver",
                node.urn,
            )
    for node in stack.of_type(BUDGET):
        topics = [
            item
            for notification in as_list(node.props.get("notifications"))
            for arn in as_list(get_path(notification, "subscriberSnsTopicArns") or [])
            for item in topic_policies.get(name_of_topic_arn(arn) or "", [])
        ]
        for label in _missing(by_urn[node.urn], topics):
            report(
                f"budget {node.name} does not wait for {label}: Budgets refuses a subscriber "
                "topic it is not yet authorized to publish to",
                node.urn,
            )
    for node in stack.of_type(MAPPING):
        fn = stack.function_named(node.props.get("functionName"))
        if fn is None or fn.role_name is None:
            continue  # event-source-mapping-permissions reports it
        for label in _missing(by_urn[node.urn], role_policies.get(fn.role_name, [])):
            report(
                f"event source mapping {node.name} does not wait for {label} of role "
                f"{fn.role_name}: CreateEventSourceMapping checks the role's permissions",
                node.urn,
            )


POLICY: Final = stack_policy(
    NAME,
    "Resources AWS validates at creation (SES receipt rules, S3 notifications, event source "
    "mappings) depend on the policies they are validated against.",
    _validate,
    remediation="Add depends_on on the bucket policy, the Lambda permission or the role policy.",
)
