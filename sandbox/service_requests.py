"""What one AWS service asks of another when it delivers, and the documents that must admit it.

When a service acts on another resource for us (Scheduler assuming a schedule's role, S3 or
EventBridge invoking a function, SES writing a mail to a bucket, Budgets publishing to a topic
and SNS using the topic's key), AWS authorises a request made by the *service principal*,
carrying a request context that names the source. This module is the one place that says, for
each delivery the sandbox plays, which principal asks, for which action on which resource,
with which context keys. The principal, action, source ARN and governing AWS page of each
delivery come from the one table the policy pack reads too
(``policies.common.service_access.DELIVERIES``); Scheduler, which assumes a role rather than
delivering into a resource policy, is described here. ``ServiceAccess`` then
evaluates the request against the trust, resource or key policy the graph declares
(``sandbox.iam.evaluate`` with ``strict=True``: a condition on a key the service does not send
is false), and a refused delivery becomes a ``Refusal`` the report shows.

Every delivery's context carries ``aws:SourceAccount`` (the account that owns the source) and
``aws:SourceArn`` (the source resource), the confused-deputy keys ("The confused deputy
problem", IAM User Guide, https://docs.aws.amazon.com/IAM/latest/UserGuide/confused-deputy.html).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from components.offline.engine import ACCOUNT_ID
from policies.common.service_access import (
    BUDGETS,
    CLOUDWATCH,
    DELIVERIES,
    EVENTS,
    S3,
    SES,
    TargetKind,
    event_rule_path,
)
from sandbox.account import arns
from sandbox.iam import Decision, Requirement, evaluate

if TYPE_CHECKING:
    from sandbox.graph import Topology

SCHEDULER = "scheduler.amazonaws.com"


def _source(arn: str, account: str = ACCOUNT_ID) -> dict[str, str]:
    return {"aws:SourceAccount": account, "aws:SourceArn": arn}


def delivery(
    principal: str, target: TargetKind, resource: str, region: str = "", **names: str
) -> Requirement:
    """The request ``principal`` makes to deliver to ``resource``, from the one table."""
    row = DELIVERIES[principal, target]
    source = row.source_arn(region=region, account=ACCOUNT_ID, **names)
    return Requirement(row.action, resource, _source(source), principal=principal)


def schedule_group_arn(region: str, group: str) -> str:
    return arns(region).schedule_group(group)


def scheduler_assume_role(region: str, group: str, role_arn: str) -> Requirement:
    """EventBridge Scheduler assumes the schedule's execution role with ``sts:AssumeRole``;
    its ``aws:SourceArn`` is the ARN of the schedule's **group**, not of the schedule ("Confused
    deputy prevention", EventBridge Scheduler User Guide,
    https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html:
    "The value of aws:SourceArn must be your EventBridge Scheduler schedule group ARN ... Do not
    scope the aws:SourceArn statement to a specific schedule or a schedule name prefix")."""
    return Requirement(
        "sts:AssumeRole",
        role_arn,
        _source(schedule_group_arn(region, group)),
        principal=SCHEDULER,
    )


def scheduler_target_action(target_arn: str) -> str | None:
    """What the assumed role must be allowed to do to the target ("Set up the execution role",
    EventBridge Scheduler User Guide,
    https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html#setting-up-execution-role)."""
    if ":lambda:" in target_arn:
        return "lambda:InvokeFunction"
    if ":sqs:" in target_arn:
        return "sqs:SendMessage"
    return None


def s3_invokes(bucket: str, function_arn: str) -> Requirement:
    """S3 invoking the function of a bucket notification, as the bucket. Principal, action, source ARN and governing page:
    :data:`policies.common.service_access.DELIVERIES`."""
    return delivery(S3, "function", function_arn, bucket=bucket)


def receipt_rule_arn(region: str, rule_set: str, rule: str) -> str:
    return DELIVERIES[SES, "bucket"].source_arn(region, ACCOUNT_ID, rule_set=rule_set, rule=rule)


def ses_puts_object(region: str, rule_set: str, rule: str, bucket: str, key: str) -> Requirement:
    """SES's S3 action writing a mail, as the receipt rule. Principal, action, source ARN and governing page:
    :data:`policies.common.service_access.DELIVERIES`."""
    return delivery(
        SES, "bucket", arns(region).object(bucket, key), region, rule_set=rule_set, rule=rule
    )


SES_SETUP_OBJECT = "AMAZON_SES_SETUP_NOTIFICATION"
"""The object SES writes under an S3 action's prefix when the receipt rule is created, to prove
it can write there ("Deliver to S3 bucket action", SES Developer Guide,
https://docs.aws.amazon.com/ses/latest/dg/receiving-email-action-s3.html)."""


def ses_invokes(region: str, rule_set: str, rule: str, function_arn: str) -> Requirement:
    """SES's Lambda action invoking a function, as the receipt rule. Principal, action, source ARN and governing page:
    :data:`policies.common.service_access.DELIVERIES`."""
    return delivery(SES, "function", function_arn, region, rule_set=rule_set, rule=rule)


def rule_arn(region: str, rule: str, bus: str = "default") -> str:
    return DELIVERIES[EVENTS, "function"].source_arn(
        region, ACCOUNT_ID, rule_path=event_rule_path(rule, bus)
    )


def events_invokes(rule: str, function_arn: str) -> Requirement:
    """An EventBridge rule invoking its Lambda target, as the rule (its ARN). Principal, action, source ARN and governing page:
    :data:`policies.common.service_access.DELIVERIES`."""
    row = DELIVERIES[EVENTS, "function"]
    return Requirement(row.action, function_arn, _source(rule), principal=row.principal)


def events_sends(rule: str, queue_arn: str) -> Requirement:
    """EventBridge sending an undeliverable event to the target's dead-letter queue. Principal, action, source ARN and governing page:
    :data:`policies.common.service_access.DELIVERIES`."""
    row = DELIVERIES[EVENTS, "queue"]
    return Requirement(row.action, queue_arn, _source(rule), principal=row.principal)


def budgets_publishes(budget: str, topic_arn: str) -> Requirement:
    """A budget notification published to a topic, as the budget. Principal, action, source ARN and governing page:
    :data:`policies.common.service_access.DELIVERIES`."""
    return delivery(BUDGETS, "topic", topic_arn, budget=budget)


def cloudwatch_publishes(region: str, alarm: str, topic_arn: str) -> Requirement:
    """A CloudWatch alarm's SNS action publishing, as the alarm. Principal, action, source ARN and governing page:
    :data:`policies.common.service_access.DELIVERIES`."""
    return delivery(CLOUDWATCH, "topic", topic_arn, region, alarm=alarm)


def topic_key_uses(publish: Requirement, key_arn: str) -> list[Requirement]:
    """A publish to a KMS-encrypted topic by an AWS service makes SNS use the topic's key on
    that service's behalf: the key policy must allow the service principal
    ``kms:GenerateDataKey*`` and ``kms:Decrypt`` ("Enable compatibility between event sources
    from AWS services and encrypted topics", SNS Developer Guide,
    https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services).
    The publish's source keys travel with it, and SNS binds each data key to the topic with
    the encryption context ``aws:sns:topicArn`` (the condition key
    ``kms:EncryptionContext:aws:sns:topicArn``, "kms:EncryptionContext:context-key", AWS KMS
    Developer Guide, https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html)."""
    context = {**publish.context, "kms:EncryptionContext:aws:sns:topicArn": publish.resource}
    return [
        Requirement(action, key_arn, context, principal=publish.principal)
        for action in ("kms:GenerateDataKey", "kms:Decrypt")
    ]


def aws_managed_key_policy(service: str, region: str) -> list[dict[str, Any]]:
    """The key policy of an AWS managed key (``alias/aws/<service>``), which no one can change
    ("AWS managed keys", AWS KMS Developer Guide,
    https://docs.aws.amazon.com/kms/latest/developerguide/concepts.html#aws-managed-key). It
    admits the principals *of this account* using the key through that service (the
    ``kms:CallerAccount`` and ``kms:ViaService`` conditions every AWS managed key policy
    carries), so a service principal, which has no caller account, is refused: the SNS guide's
    reason for a customer-managed key on topics that AWS services publish to."""
    return [
        {
            "Sid": "Allow access through the service for all principals in the account",
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": [
                "kms:Encrypt",
                "kms:Decrypt",
                "kms:ReEncrypt*",
                "kms:GenerateDataKey*",
                "kms:CreateGrant",
                "kms:DescribeKey",
            ],
            "Resource": "*",
            "Condition": {
                "StringEquals": {
                    "kms:CallerAccount": ACCOUNT_ID,
                    "kms:ViaService": f"{service}.{region}.amazonaws.com",
                }
            },
        },
        {
            "Sid": "Allow direct access to key metadata to the account",
            "Effect": "Allow",
            "Principal": {"AWS": arns("").account_root()},
            "Action": ["kms:Describe*", "kms:Get*", "kms:List*"],
            "Resource": "*",
        },
    ]


@dataclass(frozen=True)
class Refusal:
    """A delivery AWS would refuse: who asked what, and the document that did not admit it."""

    source: str  # schedule:dev-ler-retry, s3:dev-ler-raw-..., rule:..., ses:..., budget:...
    target: str
    requirement: Requirement
    document: str  # "trust policy of role dev-ler-retry-schedule-role", ...
    explicit_deny: bool = False

    @property
    def reason(self) -> str:
        r = self.requirement
        context = ", ".join(f"{k}={v}" for k, v in sorted(r.context.items()))
        verdict = "explicitly denies" if self.explicit_deny else "does not allow"
        return f"{self.document} {verdict} {r.principal or 'the caller'} {r.action} ({context})"


class ServiceAccess:
    """Evaluates service requests against the documents the graph declares."""

    def __init__(self, topology: Topology) -> None:
        self.t = topology

    def trust(self, role_arn: str, requirement: Requirement) -> tuple[Decision, str]:
        role = role_arn.rsplit("/", 1)[-1]
        statements = self.t.trust_policies.get(role, [])
        where = f"trust policy of role {role}" + (
            "" if role in self.t.trust_policies else " (no such role)"
        )
        return evaluate(statements, requirement, strict=True), where

    def resource(self, arn: str, requirement: Requirement) -> tuple[Decision, str]:
        statements = self.t.resource_policies.get(arn, [])
        kind = arn.split(":")[2]
        name = arn.rsplit(":", 1)[-1].rsplit("/", 1)[-1] if kind != "s3" else arn.split(":::")[1]
        label = {"lambda": "function", "s3": "bucket", "sqs": "queue", "sns": "topic"}.get(
            kind, kind
        )
        where = f"resource policy of {label} {name}" + ("" if statements else " (none declared)")
        return evaluate(statements, requirement, strict=True), where

    def key(self, ref: str, region: str, requirement: Requirement) -> tuple[Decision, str]:
        if ref.startswith("alias/aws/"):
            service = ref.removeprefix("alias/aws/")
            statements = aws_managed_key_policy(service, region)
            return evaluate(statements, requirement, strict=True), f"AWS managed key {ref}"
        key = self.t.key(ref)
        if key is None:
            return Decision(False, requirement), f"key {ref} (not declared in the graph)"
        return evaluate(list(key.statements), requirement, strict=True), f"key policy of {ref}"

    def topic_publish(self, publish: Requirement) -> tuple[Decision, str, Requirement]:
        """A service publishing to a topic: the topic policy, then (an encrypted topic) the key
        policy for each use SNS makes of the key on the publisher's behalf. Returns the first
        refusal (decision, document, the request refused), or the last allow."""
        topic = str(publish.resource)
        decision, where = self.resource(topic, publish)
        key_ref = self.t.topic_keys.get(topic)
        if not decision.allowed or not key_ref:
            return decision, where, publish
        region = topic.split(":")[3]
        key = self.t.key(key_ref)
        key_arn = key.arn if key else arns(region).kms(key_ref)
        for use in topic_key_uses(publish, key_arn):
            decision, where = self.key(key_ref, region, use)
            if not decision.allowed:
                return decision, where, use
        return decision, where, publish

    def same_account(
        self, identity: list[dict[str, Any]], role_arn: str, arn: str, requirement: Requirement
    ) -> tuple[Decision, str]:
        """A role of this account acting on a resource of this account: allowed when its
        identity policy or the resource's policy allows and neither explicitly denies
        ("Policy evaluation logic", IAM User Guide, requests within a single account)."""
        own = evaluate(identity, requirement)
        held, where = self.resource(arn, replace(requirement, principal=role_arn))
        role = role_arn.rsplit("/", 1)[-1]
        if own.explicit_deny:
            return own, f"identity policy of role {role}"
        if held.explicit_deny:
            return held, where
        if held.allowed and not own.allowed:
            return held, where
        return own, f"identity policy of role {role}"
