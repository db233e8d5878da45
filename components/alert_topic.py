"""AlertTopic: an SNS topic that AWS services may publish to, under a key they may use.

An AWS service that publishes to an encrypted topic (Budgets, CloudWatch alarms) calls KMS for
a data key as itself, so the topic's key policy must admit that service principal. The key
policy of an AWS-managed key (``alias/aws/sns``) cannot be changed, so those services cannot
publish to a topic under it: the notification is dropped and nobody hears the alarm. This block
therefore creates a customer-managed key per topic whose policy admits exactly the publishers
it is given, each pinned to this account and, where AWS documents the source ARN, to its
sources; the topic policy admits the same publishers for ``sns:Publish`` with the same
conditions, and refuses publishing over plain HTTP.

Governing pages:

- Amazon SNS Developer Guide, "Managing Amazon SNS encryption keys and costs", section "Enable
  compatibility between event sources from AWS services and encrypted topics":
  https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
  (a customer-managed key whose policy lets the service principal ``kms:GenerateDataKey*`` and
  ``kms:Decrypt``, conditioned on ``aws:SourceArn`` and the ``kms:EncryptionContext:aws:sns:topicArn``
  SNS sends; AWS-managed keys cannot be used by AWS-service event sources).
- AWS Cost Management User Guide, "Creating an Amazon SNS topic for budget notifications":
  https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-sns-policy.html
  (``budgets.amazonaws.com`` publishes with ``aws:SourceAccount`` and ``aws:SourceArn`` like
  ``arn:aws:budgets::<account>:*``; the topic must be in the budget's account).
- Amazon CloudWatch User Guide, "Using Amazon CloudWatch alarms" / alarm actions with an
  encrypted topic: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html
  (``cloudwatch.amazonaws.com`` publishes with ``aws:SourceArn`` of the alarm,
  ``arn:aws:cloudwatch:<region>:<account>:alarm:*``).
- AWS KMS Developer Guide, "Default key policy", "Allows access to the AWS account and enables
  IAM policies": https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html
  (the account root administers the key, so the key can never become unmanageable).
- Amazon SNS Developer Guide, "Amazon SNS security best practices", "Enforce encryption of data
  in transit": https://docs.aws.amazon.com/sns/latest/dg/sns-security-best-practices.html
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components.arns import Arns

KEY_USE_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey*")
"""What a publishing service needs of the topic's key (SNS key-management page)."""

ENCRYPTION_CONTEXT_TOPIC = "kms:EncryptionContext:aws:sns:topicArn"
"""The encryption context SNS sends to KMS for a topic's messages (SNS key-management page)."""

KEY_ALIAS_TAG = "crm:kms-alias"
"""Tag on the key naming its alias: the known string the policy pack joins a topic's
``kmsMasterKeyId`` (the alias) to the key and its policy on, at preview."""


@dataclass(frozen=True)
class ServicePublisher:
    """An AWS service principal allowed to publish, pinned to this account and its sources.

    Attributes:
        service: The service principal, e.g. ``budgets.amazonaws.com``.
        source_arn: ARN (pattern) of the sources publishing, e.g. ``arn:aws:budgets::<acct>:*``;
            None where AWS documents only ``aws:SourceAccount`` for that service.
    """

    service: str
    source_arn: str | None = None

    def __post_init__(self) -> None:
        if not self.service.endswith(".amazonaws.com"):
            raise ValueError(f"{self.service!r} is not an AWS service principal")

    def conditions(self, account_id: str) -> dict[str, dict[str, str]]:
        """The source conditions of every statement admitting this publisher."""
        found: dict[str, dict[str, str]] = {"StringEquals": {"aws:SourceAccount": account_id}}
        if self.source_arn:
            found["ArnLike"] = {"aws:SourceArn": self.source_arn}
        return found

    @property
    def sid(self) -> str:
        return "".join(p.capitalize() for p in self.service.split(".")[0].split("-"))


def budgets_publisher(arns: Arns) -> ServicePublisher:
    """AWS Budgets of this account (budgets are global: no region in their ARN)."""
    return ServicePublisher(
        "budgets.amazonaws.com", f"arn:{arns.partition}:budgets::{arns.account_id}:*"
    )


def alarms_publisher(arns: Arns) -> ServicePublisher:
    """CloudWatch alarms of this account in the topic's region."""
    return ServicePublisher(
        "cloudwatch.amazonaws.com",
        f"arn:{arns.partition}:cloudwatch:{arns.region}:{arns.account_id}:alarm:*",
    )


@dataclass(frozen=True)
class AlertTopicArgs:
    """Arguments of :class:`AlertTopic`.

    Attributes:
        arns: ARN builder for the topic's account and region.
        name: Physical topic name (``dev-budget-alerts``); the key alias is ``alias/<name>``.
        publishers: AWS services that publish to the topic (at least one).
        emails: Addresses subscribed by email (each confirms its subscription once).
        tags: Tags for the key and the topic.
        encrypted: Under a customer-managed key of its own ($1 a month); False leaves the topic
            unencrypted at rest (alarm and budget notices: names and thresholds, no customer
            data), which every AWS-service publisher can publish to.
    """

    arns: Arns
    name: str
    publishers: Sequence[ServicePublisher]
    emails: Sequence[str] = field(default_factory=tuple)
    tags: Mapping[str, str] = field(default_factory=dict)
    encrypted: bool = True


class AlertTopic(pulumi.ComponentResource):
    """An SNS topic under its own customer-managed key, published to by named AWS services."""

    key: aws.kms.Key | None
    alias: aws.kms.Alias | None
    topic: aws.sns.Topic
    topic_arn: str
    """Known at preview (built from account, region and name), for budgets and grants."""

    def __init__(
        self, resource_name: str, args: AlertTopicArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("crm:index:AlertTopic", resource_name, None, opts)
        if not args.publishers:
            raise ValueError(f"topic {args.name}: an alert topic needs at least one publisher")
        self.args = args
        self.topic_arn = args.arns.topic(args.name)
        self.alias_name = f"alias/{args.name}"
        child = pulumi.ResourceOptions(parent=self)

        self.key = self.alias = None
        if args.encrypted:
            self.key = aws.kms.Key(
                f"{resource_name}-key",
                description=f"Encrypts SNS topic {args.name}; usable by its AWS-service publishers",
                key_usage="ENCRYPT_DECRYPT",
                customer_master_key_spec="SYMMETRIC_DEFAULT",
                enable_key_rotation=True,
                deletion_window_in_days=30,
                policy=json.dumps(self.key_policy(), sort_keys=True),
                tags={**args.tags, KEY_ALIAS_TAG: self.alias_name},
                opts=child,
            )
            self.alias = aws.kms.Alias(
                f"{resource_name}-alias",
                name=self.alias_name,
                target_key_id=self.key.key_id,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.key]),
            )
        self.topic = aws.sns.Topic(
            resource_name,
            name=args.name,
            kms_master_key_id=self.alias_name if args.encrypted else None,
            tags=dict(args.tags),
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[self.alias] if self.alias is not None else []
            ),
        )
        aws.sns.TopicPolicy(
            f"{resource_name}-policy",
            arn=self.topic_arn,
            policy=json.dumps(self.topic_policy(), sort_keys=True),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.topic]),
        )
        for index, address in enumerate(args.emails):
            aws.sns.TopicSubscription(
                f"{resource_name}-email-{index}",
                topic=self.topic_arn,
                protocol="email",
                endpoint=address,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.topic]),
            )
        outputs: dict[str, Any] = {"topic_arn": self.topic.arn}
        if self.key is not None:
            outputs["key_arn"] = self.key.arn
        self.register_outputs(outputs)

    def key_policy(self) -> dict[str, Any]:
        """The key policy: the account administers; each publisher may use the key."""
        arns = self.args.arns
        statements: list[dict[str, Any]] = [
            {
                "Sid": "AccountAdministersKey",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:{arns.partition}:iam::{arns.account_id}:root"},
                "Action": "kms:*",
                "Resource": "*",
            }
        ]
        for publisher in self.args.publishers:
            condition = publisher.conditions(arns.account_id)
            # The SNS page's shape: the source, and the topic as SNS's encryption context, so
            # the service may use this key for this topic only.
            condition["StringEquals"][ENCRYPTION_CONTEXT_TOPIC] = self.topic_arn
            statements.append(
                {
                    "Sid": f"{publisher.sid}UsesKey",
                    "Effect": "Allow",
                    "Principal": {"Service": publisher.service},
                    "Action": list(KEY_USE_ACTIONS),
                    "Resource": "*",
                    "Condition": condition,
                }
            )
        return {"Version": "2012-10-17", "Statement": statements}

    def topic_policy(self) -> dict[str, Any]:
        """The topic policy: each publisher may publish; nobody may over plain HTTP."""
        account_id = self.args.arns.account_id
        statements: list[dict[str, Any]] = [
            {
                "Sid": f"{publisher.sid}Publishes",
                "Effect": "Allow",
                "Principal": {"Service": publisher.service},
                "Action": "sns:Publish",
                "Resource": self.topic_arn,
                "Condition": publisher.conditions(account_id),
            }
            for publisher in self.args.publishers
        ]
        statements.append(
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sns:Publish",
                "Resource": self.topic_arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        )
        return {"Version": "2012-10-17", "Statement": statements}
