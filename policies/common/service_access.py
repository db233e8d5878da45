"""Where one AWS service acts on another: admissions, source conditions and delivery edges.

The service-to-service rules share three readings of the graph:

- :func:`condition_values`: the values a statement's condition requires of one key, read only
  from positive operators (``StringEquals``, ``ArnLike``...), since a negated or ``IfExists``
  operator does not pin the request to a source;
- :func:`service_admissions`: every Allow in a resource policy (queue, topic, bucket policy)
  that admits an AWS service principal, with the target it is attached to;
- :func:`deliveries`: every place the graph makes an AWS service deliver to a topic, queue,
  bucket or function (a budget's subscribers, an alarm's actions, an EventBridge target or its
  dead-letter queue, an S3 notification, an SES receipt rule's S3 action).

Targets are named by plain strings known at preview (queue and topic names, bucket names,
function names), the same join the other stack rules use.

:data:`DELIVERIES` is the one table of how each AWS service delivers: its principal, the action
it performs on each kind of target, the ARN of the source it sends as ``aws:SourceArn``, and
the AWS page that documents it. The policy pack reads it here; the sandbox
(``sandbox/service_requests.py``) builds the requests it evaluates from the same rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from policies.common.documents import Document, Statement, as_list, documents_in, principals
from policies.common.graph import Stack, lambda_name, queue_name_of_arn, queue_name_of_url
from policies.common.iamdata import glob_regex, patterns_intersect
from policies.common.props import as_str, get_path

TargetKind = Literal["topic", "queue", "bucket", "function"]

TOPIC: Final = "aws:sns/topic:Topic"
TOPIC_POLICY: Final = "aws:sns/topicPolicy:TopicPolicy"
QUEUE: Final = "aws:sqs/queue:Queue"
QUEUE_POLICY: Final = "aws:sqs/queuePolicy:QueuePolicy"
BUCKET_POLICY: Final = "aws:s3/bucketPolicy:BucketPolicy"
PERMISSION: Final = "aws:lambda/permission:Permission"
BUDGET: Final = "aws:budgets/budget:Budget"
METRIC_ALARM: Final = "aws:cloudwatch/metricAlarm:MetricAlarm"
EVENT_TARGET: Final = "aws:cloudwatch/eventTarget:EventTarget"
BUCKET_NOTIFICATION: Final = "aws:s3/bucketNotification:BucketNotification"
RECEIPT_RULE: Final = "aws:ses/receiptRule:ReceiptRule"

PUBLISH_ACTIONS: Final[Mapping[TargetKind, str]] = {
    "topic": "sns:Publish",
    "queue": "sqs:SendMessage",
    "bucket": "s3:PutObject",
    "function": "lambda:InvokeFunction",
}
"""The action a delivering service performs on each kind of target."""

S3: Final = "s3.amazonaws.com"
SES: Final = "ses.amazonaws.com"
EVENTS: Final = "events.amazonaws.com"
BUDGETS: Final = "budgets.amazonaws.com"
CLOUDWATCH: Final = "cloudwatch.amazonaws.com"


@dataclass(frozen=True)
class ServiceDelivery:
    """How one AWS service delivers to one kind of target.

    Attributes:
        principal: The service principal that makes the request.
        target: The kind of target.
        source: The ``aws:SourceArn`` it sends, a template over ``region``, ``account`` and the
            source's own names (``bucket``; ``rule_set`` and ``rule``; ``rule_path``;
            ``budget``; ``alarm``). The policy pack fills an unknown region or account with
            ``*``.
        page: The AWS page that documents the principal, action and source.
    """

    principal: str
    target: TargetKind
    source: str
    page: str

    @property
    def action(self) -> str:
        """The action the service performs on the target."""
        return PUBLISH_ACTIONS[self.target]

    def source_arn(self, region: str = "*", account: str = "*", **names: str) -> str:
        """The source ARN for one source (``bucket=...``, ``alarm=...``)."""
        return self.source.format(region=region, account=account, **names)


_RECEIPT_RULE = "arn:aws:ses:{region}:{account}:receipt-rule-set/{rule_set}:receipt-rule/{rule}"
_SES_RECEIVING = "https://docs.aws.amazon.com/ses/latest/dg/receiving-email-permissions.html"
_EVENT_RULE = "arn:aws:events:{region}:{account}:rule/{rule_path}"

DELIVERIES: Final[Mapping[tuple[str, TargetKind], ServiceDelivery]] = {
    (d.principal, d.target): d
    for d in (
        # S3 User Guide, "Granting permissions to publish event notification messages to a
        # destination"; Lambda Developer Guide, "Tutorial: Using an Amazon S3 trigger".
        ServiceDelivery(
            S3,
            "function",
            "arn:aws:s3:::{bucket}",
            "https://docs.aws.amazon.com/AmazonS3/latest/userguide/grant-destinations-permissions-to-s3.html",
        ),
        # SES Developer Guide, "Giving permissions to Amazon SES for email receiving".
        ServiceDelivery(SES, "bucket", _RECEIPT_RULE, _SES_RECEIVING),
        ServiceDelivery(SES, "function", _RECEIPT_RULE, _SES_RECEIVING),
        ServiceDelivery(SES, "topic", _RECEIPT_RULE, _SES_RECEIVING),
        # EventBridge User Guide, "Using resource-based policies for Amazon EventBridge".
        ServiceDelivery(
            EVENTS,
            "function",
            _EVENT_RULE,
            "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html",
        ),
        # EventBridge User Guide, "Using dead-letter queues to process undelivered events".
        ServiceDelivery(
            EVENTS,
            "queue",
            _EVENT_RULE,
            "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html",
        ),
        # AWS Cost Management User Guide, "Creating an Amazon SNS topic for budget notifications".
        ServiceDelivery(
            BUDGETS,
            "topic",
            "arn:aws:budgets::{account}:budget/{budget}",
            "https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-sns-policy.html",
        ),
        # AWS Knowledge Center, "Why didn't I receive an SNS notification for my CloudWatch
        # alarm trigger?" (the refusal names the alarm's ARN as the source).
        ServiceDelivery(
            CLOUDWATCH,
            "topic",
            "arn:aws:cloudwatch:{region}:{account}:alarm:{alarm}",
            "https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger",
        ),
    )
}
"""Every (service principal, target kind) delivery the graph can declare."""


def event_rule_path(rule: str, bus: str = "default") -> str:
    """A rule's path in its ARN: ``name`` on the default bus, else ``bus/name``."""
    return rule if bus == "default" else f"{bus}/{rule}"

SOURCE_SERVICE: Final[Mapping[str, str]] = {
    "budgets.amazonaws.com": "budgets",
    "cloudwatch.amazonaws.com": "cloudwatch",
    "events.amazonaws.com": "events",
    "s3.amazonaws.com": "s3",
    "ses.amazonaws.com": "ses",
    "scheduler.amazonaws.com": "scheduler",
    "sns.amazonaws.com": "sns",
}
"""Service principal -> the service part of the ARN it sends as ``aws:SourceArn``."""


def condition_values(condition: Mapping[str, Any], key: str) -> list[str]:
    """Values a positive operator requires of ``key`` (case-insensitive); empty if none."""
    found: list[str] = []
    for operator, block in condition.items():
        op = str(operator)
        if "Not" in op or op.endswith("IfExists") or op == "Null" or not isinstance(block, Mapping):
            continue
        for name, value in block.items():
            if str(name).lower() == key.lower():
                found.extend(str(v) for v in as_list(value))
    return found


def arn_parts(arn: str) -> tuple[str, str, str, str, str] | None:
    """(partition, service, region, account, resource) of an ARN, or None."""
    parts = arn.split(":", 5)
    if len(parts) != 6 or parts[0] != "arn":
        return None
    return parts[1], parts[2], parts[3], parts[4], parts[5]


def arn_covers(pattern: str, arn: str) -> bool:
    """Whether an ARN pattern (IAM glob) matches ``arn``."""
    return bool(glob_regex(pattern).match(arn))


def arns_overlap(a: str, b: str) -> bool:
    """Whether two ARN patterns can name one resource (a source ARN whose region or account
    the graph does not say carries ``*`` there)."""
    left, right = arn_parts(a), arn_parts(b)
    if left is None or right is None:
        return patterns_intersect(a, b)
    # Part by part: a "*" in one ARN's region must not run on into the other's resource.
    return all(patterns_intersect(x, y) for x, y in zip(left, right, strict=True))


def name_of_topic_arn(value: Any) -> str | None:
    """``arn:aws:sns:region:account:name`` -> name."""
    text = as_str(value)
    parts = arn_parts(text) if text else None
    return parts[4] if parts and parts[1] == "sns" and ":" not in parts[4] else None


@dataclass(frozen=True)
class Admission:
    """An Allow in a target's resource policy admitting one AWS service principal.

    Attributes:
        kind: The kind of target the policy is attached to.
        target: The target's name (queue, topic or bucket name; function name).
        service: The service principal (``events.amazonaws.com``).
        actions: The statement's actions (empty for a lambda Permission: its ``action``).
        source_arns: Required ``aws:SourceArn`` values (the permission's ``sourceArn``).
        source_accounts: Required ``aws:SourceAccount`` values (``sourceAccount``).
        where: What a reader looks for (``QueuePolicy ..., statement 'X'``).
        urn: Where a violation is reported.
        statement: The statement, when the admission is one (not a lambda Permission).
    """

    kind: TargetKind
    target: str
    service: str
    actions: tuple[str, ...]
    source_arns: tuple[str, ...]
    source_accounts: tuple[str, ...]
    where: str
    urn: str
    statement: Statement | None = None

    def admits(self, action: str) -> bool:
        if self.statement is None:
            return any(a.lower() == action.lower() for a in self.actions)
        return self.statement.covers_action(action)


def _policy_target(doc: Document) -> tuple[TargetKind, str] | None:
    props = doc.props
    if doc.resource_type == QUEUE_POLICY:
        name = queue_name_of_url(props.get("queueUrl"))
        return ("queue", name) if name else None
    if doc.resource_type == QUEUE:
        name = as_str(props.get("name"))
        return ("queue", name) if name else None
    if doc.resource_type == TOPIC_POLICY:
        name = name_of_topic_arn(props.get("arn"))
        return ("topic", name) if name else None
    if doc.resource_type == TOPIC:
        name = as_str(props.get("name"))
        return ("topic", name) if name else None
    if doc.resource_type in (BUCKET_POLICY, "aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"):
        name = as_str(props.get("bucket"))
        return ("bucket", name) if name else None
    return None


def service_admissions(resources: Iterable[Any]) -> list[Admission]:
    """Every admission of an AWS service principal by a queue, topic, bucket or function."""
    resources = list(resources)
    found: list[Admission] = []
    for doc in documents_in(resources):
        if doc.kind != "resource" or doc.error:
            continue
        target = _policy_target(doc)
        if target is None:
            continue
        for st in doc.allow_statements:
            for service in principals(st.principal).get("Service", []):
                found.append(
                    Admission(
                        kind=target[0],
                        target=target[1],
                        service=service,
                        actions=st.all_actions,
                        source_arns=tuple(condition_values(st.condition, "aws:SourceArn")),
                        source_accounts=tuple(condition_values(st.condition, "aws:SourceAccount")),
                        where=doc.describe(st),
                        urn=doc.urn,
                        statement=st,
                    )
                )
    stack = Stack(resources)
    for node in stack.of_type(PERMISSION):
        principal = as_str(node.props.get("principal")) or ""
        function = lambda_name(node.props.get("function"))
        if not principal.endswith(".amazonaws.com") or function is None:
            continue
        arn = as_str(node.props.get("sourceArn"))
        account = as_str(node.props.get("sourceAccount"))
        found.append(
            Admission(
                kind="function",
                target=function,
                service=principal,
                actions=(as_str(node.props.get("action")) or "",),
                source_arns=(arn,) if arn else (),
                source_accounts=(account,) if account else (),
                where=f"lambda Permission {node.name}",
                urn=node.urn,
            )
        )
    return found


@dataclass(frozen=True)
class Delivery:
    """One place the graph makes an AWS service deliver to a target.

    Attributes:
        service: The delivering service principal.
        kind: The target's kind.
        target: The target's name.
        source: The ARN (or ARN pattern) the service acts for, when known at preview.
        where: The resource that sets the delivery up (for messages).
        urn: Its URN.
    """

    service: str
    kind: TargetKind
    target: str
    source: str | None
    where: str
    urn: str


def _target_of_arn(arn: Any) -> tuple[TargetKind, str] | None:
    if name := name_of_topic_arn(arn):
        return "topic", name
    if name := queue_name_of_arn(arn):
        return "queue", name
    text = as_str(arn)
    parts = arn_parts(text) if text else None
    if parts and parts[1] == "lambda" and (name := lambda_name(text)):
        return "function", name
    return None


def _rule_path(props: Mapping[str, Any]) -> str:
    return event_rule_path(
        as_str(props.get("rule")) or "?", as_str(props.get("eventBusName")) or "default"
    )


def deliveries(resources: Iterable[Any]) -> Iterator[Delivery]:
    """Every delivery an AWS service makes to a topic, queue, bucket or function of the graph.

    A source ARN whose region or account is not in the target's properties carries ``*`` there
    (an EventBridge rule's ARN is matched by its name and bus)."""
    stack = Stack(list(resources))
    for node in stack.of_type(BUDGET):
        for notification in as_list(node.props.get("notifications")):
            for arn in as_list(get_path(notification, "subscriberSnsTopicArns") or []):
                if name := name_of_topic_arn(arn):
                    yield Delivery(
                        BUDGETS,
                        "topic",
                        name,
                        None,
                        f"Budget {node.name}",
                        node.urn,
                    )
    for node in stack.of_type(METRIC_ALARM):
        alarm = as_str(node.props.get("name"))
        for key in ("alarmActions", "okActions", "insufficientDataActions"):
            for arn in as_list(node.props.get(key)):
                if name := name_of_topic_arn(arn):
                    source = (
                        DELIVERIES[CLOUDWATCH, "topic"].source_arn(alarm=alarm) if alarm else None
                    )
                    yield Delivery(
                        CLOUDWATCH,
                        "topic",
                        name,
                        source,
                        f"MetricAlarm {node.name}",
                        node.urn,
                    )
    for node in stack.of_type(EVENT_TARGET):
        path = _rule_path(node.props)
        where = f"EventTarget {node.name}"
        for arn in (node.props.get("arn"), get_path(node.props, "deadLetterConfig", "arn")):
            target = _target_of_arn(arn)
            if target is not None:
                source = DELIVERIES[EVENTS, "function"].source_arn(rule_path=path)
                yield Delivery(EVENTS, target[0], target[1], source, where, node.urn)
    for node in stack.of_type(BUCKET_NOTIFICATION):
        bucket = as_str(node.props.get("bucket"))
        source = DELIVERIES[S3, "function"].source_arn(bucket=bucket) if bucket else None
        where = f"BucketNotification {node.name}"
        for key, arn_key in (
            ("lambdaFunctions", "lambdaFunctionArn"),
            ("queues", "queueArn"),
            ("topics", "topicArn"),
        ):
            for entry in as_list(node.props.get(key)):
                target = _target_of_arn(get_path(entry, arn_key))
                if target is not None:
                    yield Delivery(S3, target[0], target[1], source, where, node.urn)
    for node in stack.of_type(RECEIPT_RULE):
        rule_set = as_str(node.props.get("ruleSetName"))
        rule = as_str(node.props.get("name"))
        source = (
            DELIVERIES[SES, "bucket"].source_arn(rule_set=rule_set, rule=rule)
            if rule_set and rule
            else None
        )
        where = f"ReceiptRule {node.name}"
        for action in as_list(node.props.get("s3Actions")):
            if bucket := as_str(get_path(action, "bucketName")):
                yield Delivery(SES, "bucket", bucket, source, where, node.urn)
        for action in as_list(node.props.get("snsActions")):
            if name := name_of_topic_arn(get_path(action, "topicArn")):
                yield Delivery(SES, "topic", name, source, where, node.urn)
        for action in as_list(node.props.get("lambdaActions")):
            if name := lambda_name(get_path(action, "functionArn")):
                yield Delivery(SES, "function", name, source, where, node.urn)
