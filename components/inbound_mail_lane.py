"""InboundMailLane: SES receives mail for some addresses, stores it in S3, a function reads it.

The receipt rule writes each message under one prefix of a PrivateBucket; the bucket policy
lets only SES, for this account and this rule, write there. The bucket's notification on that
prefix triggers the function (declared on the function as a BucketTrigger), so the lane is:
mail -> SES rule -> s3://bucket/<prefix> -> function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.deployment import Deployment
from components.private_bucket import ServiceWriter


@dataclass(frozen=True)
class InboundMailLaneArgs:
    """Arguments of :class:`InboundMailLane`.

    Attributes:
        deployment: Where the lane lives (a region with SES inbound).
        name: Seed name of the receipt rule set and rule (``ler-inbound``).
        recipients: Addresses (or domains) whose mail the rule accepts.
        bucket_name: Physical name of the PrivateBucket the mail is stored in.
        prefix: Key prefix for stored mail (ends with ``/``).
        activate: Make this rule set the account's active one (only one can be active).
        bucket_ready: What the rule waits for: the bucket and its policy admitting SES. SES
            checks at ``CreateReceiptRule`` that it may write the bucket and refuses the rule
            otherwise (``InvalidS3Configuration``, Amazon SES API Reference, CreateReceiptRule:
            https://docs.aws.amazon.com/ses/latest/APIReference/API_CreateReceiptRule.html).
    """

    deployment: Deployment
    name: str
    recipients: Sequence[str]
    bucket_name: str
    prefix: str
    activate: bool = True
    bucket_ready: Sequence[pulumi.Resource] = ()


def mail_writer(args: InboundMailLaneArgs) -> ServiceWriter:
    """The bucket-policy entry that lets this lane's SES rule write mail into the bucket."""
    d = args.deployment
    rule_set = d.name(args.name)
    return ServiceWriter(
        service="ses.amazonaws.com",
        prefix=args.prefix,
        source_arn=d.arns.ses_receipt_rule(rule_set, rule_set),
    )


class InboundMailLane(pulumi.ComponentResource):
    """A receipt rule set with one rule storing mail for the recipients in S3."""

    rule_set: aws.ses.ReceiptRuleSet
    rule: aws.ses.ReceiptRule

    def __init__(
        self,
        resource_name: str,
        args: InboundMailLaneArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("crm:index:InboundMailLane", resource_name, None, opts)
        if not args.recipients:
            raise ValueError(f"mail lane {args.name}: at least one recipient")
        if not args.prefix.endswith("/"):
            raise ValueError(f"mail lane {args.name}: prefix must end with '/'")
        d = args.deployment
        self.args = args
        self.rule_set_name = d.name(args.name)
        self.rule_set = aws.ses.ReceiptRuleSet(
            resource_name,
            rule_set_name=self.rule_set_name,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.rule = aws.ses.ReceiptRule(
            f"{resource_name}-rule",
            name=self.rule_set_name,
            rule_set_name=self.rule_set_name,
            recipients=list(args.recipients),
            enabled=True,
            scan_enabled=True,
            tls_policy="Require",
            s3_actions=[
                aws.ses.ReceiptRuleS3ActionArgs(
                    bucket_name=args.bucket_name, object_key_prefix=args.prefix, position=1
                )
            ],
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[self.rule_set, *args.bucket_ready]
            ),
        )
        if args.activate:
            aws.ses.ActiveReceiptRuleSet(
                f"{resource_name}-active",
                rule_set_name=self.rule_set_name,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.rule]),
            )
        self.register_outputs({"rule_set_name": self.rule_set_name})
