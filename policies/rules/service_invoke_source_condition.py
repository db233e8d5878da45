"""service-invoke-source-condition: a service acting on a resource is admitted for its source only.

What, for the resource policies that admit an AWS service principal (an Allow in an SNS topic
policy, an SQS queue policy or an S3 bucket policy to ``*.amazonaws.com``; an
``aws:lambda/permission`` with a service principal):

1. each carries a source condition (positive operators): ``aws:SourceArn`` naming a resource
   of the admitted service (``events.amazonaws.com`` -> ``arn:aws:events:...``, ``ses`` ->
   ``arn:aws:ses:...``, ``s3`` -> ``arn:aws:s3:::...``, ``budgets``, ``cloudwatch``...), and
   ``aws:SourceAccount`` as well wherever that ARN carries no concrete account (bucket ARNs
   never do); a lambda Permission names both ``sourceArn`` and ``sourceAccount``;
2. every delivery the graph sets up is admitted by its target's policy for that service and
   that source: an EventBridge target (function, queue or topic) and its dead-letter queue for
   the rule's ARN, an S3 notification (function, queue, topic) for the bucket, an SES receipt
   rule's S3 / SNS / Lambda action for the rule's ARN, a budget's subscriber topics for
   ``budgets.amazonaws.com``, a CloudWatch alarm's action topics for the alarm.

Why: without a source condition any account's rule, bucket or alarm could use the service to
reach this resource (the confused deputy), and with the wrong one - or with no admission at
all - the service's every delivery is refused, silently: nothing runs, nothing is stored, no
alarm arrives. Pages: IAM User Guide, "The confused deputy problem"
(https://docs.aws.amazon.com/IAM/latest/UserGuide/confused-deputy.html); Lambda Developer Guide,
"Working with resource-based IAM policies in Lambda" (service principals with ``SourceArn``
and, for S3, ``SourceAccount``: https://docs.aws.amazon.com/lambda/latest/dg/access-control-resource-based.html);
Amazon SES Developer Guide, "Giving permissions to Amazon SES for email receiving"
(https://docs.aws.amazon.com/ses/latest/dg/receiving-email-permissions.html: bucket policy with
``aws:SourceAccount`` and ``aws:SourceArn`` of the receipt rule); Amazon EventBridge User
Guide, "Using resource-based policies for Amazon EventBridge" (SQS and SNS targets and DLQs
admit ``events.amazonaws.com`` for the rule's ARN:
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html); AWS Cost
Management User Guide, "Creating an Amazon SNS topic for budget notifications"
(https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-sns-policy.html).

Fix: use the blocks: ``ScopedLambda`` triggers add the permission with ``source_arn`` and
``source_account``; ``WorkQueue`` service senders, ``PrivateBucket`` service writers and
``AlertTopic`` publishers carry the source conditions.
"""

from __future__ import annotations

import re
from typing import Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.rule import stack_policy
from policies.common.service_access import (
    PUBLISH_ACTIONS,
    SOURCE_SERVICE,
    Admission,
    Delivery,
    arn_parts,
    arns_overlap,
    deliveries,
    service_admissions,
)

NAME: Final = "service-invoke-source-condition"
ACCOUNT: Final = re.compile(r"^\d{12}$")


def admission_problems(admission: Admission) -> list[str]:
    """Why one admission does not pin the service to a source; empty when it does."""
    problems: list[str] = []
    accounts = [a for a in admission.source_accounts if ACCOUNT.match(a)]
    if len(accounts) != len(admission.source_accounts):
        problems.append(
            f"has aws:SourceAccount {list(admission.source_accounts)} that is not an account id"
        )
    if admission.kind == "function" and not (admission.source_arns and admission.source_accounts):
        missing = " and ".join(
            name
            for name, value in (
                ("sourceArn", admission.source_arns),
                ("sourceAccount", admission.source_accounts),
            )
            if not value
        )
        problems.append(f"names no {missing}")
        return problems
    if not admission.source_arns:
        if not admission.source_accounts:
            problems.append("has no aws:SourceArn or aws:SourceAccount condition")
        elif admission.service in SOURCE_SERVICE:
            problems.append("has no aws:SourceArn condition naming the source it acts for")
        return problems
    expected = SOURCE_SERVICE.get(admission.service)
    for arn in admission.source_arns:
        parts = arn_parts(arn)
        if parts is None:
            problems.append(f"has aws:SourceArn {arn!r}, which is not an ARN")
            continue
        if expected and parts[1] != expected:
            problems.append(
                f"has aws:SourceArn {arn} of service {parts[1]!r}, but {admission.service} "
                f"acts for {expected} resources: it never matches"
            )
        if not ACCOUNT.match(parts[3]) and not accounts:
            problems.append(
                f"has aws:SourceArn {arn} without a concrete account and no aws:SourceAccount"
            )
    return problems


def _admits(admission: Admission, delivery: Delivery) -> bool:
    if (admission.kind, admission.target, admission.service) != (
        delivery.kind,
        delivery.target,
        delivery.service,
    ):
        return False
    if not admission.admits(PUBLISH_ACTIONS[delivery.kind]):
        return False
    if delivery.source is None or not admission.source_arns:
        return True
    return any(arns_overlap(arn, delivery.source) for arn in admission.source_arns)


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    admissions = service_admissions(args.resources)
    for admission in admissions:
        for problem in admission_problems(admission):
            report(
                f"{admission.where} admits {admission.service} to {admission.kind} "
                f"{admission.target} but {problem}",
                admission.urn,
            )
    seen: set[tuple[str, str, str, str | None]] = set()
    for delivery in deliveries(args.resources):
        key = (delivery.service, delivery.kind, delivery.target, delivery.source)
        if key in seen:
            continue
        seen.add(key)
        if not any(_admits(a, delivery) for a in admissions):
            source = f" for {delivery.source}" if delivery.source else ""
            report(
                f"{delivery.where} makes {delivery.service} deliver to {delivery.kind} "
                f"{delivery.target}, but no policy of {delivery.target} admits "
                f"{delivery.service}{source} for {PUBLISH_ACTIONS[delivery.kind]}: every "
                "delivery would be refused",
                delivery.urn,
            )


POLICY: Final = stack_policy(
    NAME,
    "Every AWS service that invokes a function, writes a bucket or sends to a queue or topic is "
    "admitted by the target's policy for its own source (aws:SourceArn / aws:SourceAccount).",
    _validate,
    remediation=(
        "Admit the service with aws:SourceArn = its source (rule, bucket, receipt rule, alarm, "
        "budgets) plus aws:SourceAccount; on lambda permissions set source_arn and "
        "source_account."
    ),
)
