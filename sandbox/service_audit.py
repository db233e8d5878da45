"""Every service-to-service delivery a graph declares, evaluated without running anything.

The sandbox evaluates each delivery when it happens; this walks the graph for all of them at
once (any stack: ``Topology.from_graph(program_graph("prod"))``), so a refusal shows for a
delivery no scripted day reaches: each declared schedule (Scheduler assuming its role, then
the role reaching the target), each S3 notification, each receipt rule's S3 and Lambda
actions, each EventBridge target and its dead-letter queue, each budget's and each CloudWatch
alarm's topics and their keys. The requests are those of ``sandbox.service_requests``; ``when`` says whether AWS
refuses at creation (S3 ``PutBucketNotificationConfiguration`` and SES ``CreateReceiptRule``
check their permissions, so ``pulumi up`` fails) or only at delivery (the rest: nothing fails
until the event is lost).

Not covered: schedules a handler creates at run time (their group and role are known only to
the handler; the sandbox evaluates them when they fire).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from policies.common.service_access import SES
from sandbox.account import arns
from sandbox.iam import Decision, Requirement
from sandbox.service_requests import (
    SES_SETUP_OBJECT,
    Refusal,
    ServiceAccess,
    budgets_publishes,
    cloudwatch_publishes,
    events_invokes,
    events_sends,
    rule_arn,
    s3_invokes,
    scheduler_assume_role,
    scheduler_target_action,
    ses_invokes,
    ses_puts_object,
)

if TYPE_CHECKING:
    from sandbox.graph import Topology


@dataclass(frozen=True)
class Finding:
    """A declared delivery AWS would refuse, and when it would."""

    refusal: Refusal
    when: Literal["create", "deliver"]

    @property
    def failing_call(self) -> str:
        """For ``create``: the creating call that fails and how."""
        r = self.refusal.requirement
        if r.principal == SES and r.action == "s3:PutObject":
            return "SES CreateReceiptRule InvalidS3Configuration"
        if r.principal == SES:
            return "SES CreateReceiptRule InvalidLambdaFunction"
        return "S3 PutBucketNotificationConfiguration"


def audit(topology: Topology) -> list[Finding]:
    """Every declared delivery that a trust, resource or key policy would refuse."""
    access = ServiceAccess(topology)
    found: list[Finding] = []

    def check(
        when: Literal["create", "deliver"],
        source: str,
        target: str,
        request: Requirement,
        result: tuple[Decision, str],
    ) -> bool:
        decision, where = result
        if not decision.allowed:
            refusal = Refusal(source, target, request, where, decision.explicit_deny)
            found.append(Finding(refusal, when))
        return decision.allowed

    for s in topology.schedules:
        source, action = f"schedule:{s.name}", scheduler_target_action(s.target_arn)
        assume = scheduler_assume_role(s.region, s.group, s.role_arn)
        if action is None or not check(
            "deliver", source, s.target_arn, assume, access.trust(s.role_arn, assume)
        ):
            continue
        call = Requirement(action, s.target_arn)
        role = s.role_arn.rsplit("/", 1)[-1]
        result = access.same_account(
            topology.policies.get(role, []), s.role_arn, s.target_arn, call
        )
        check("deliver", source, s.target_arn, call, result)
    for n in topology.notifications:
        request = s3_invokes(n.bucket, n.function_arn)
        source = f"s3:{n.bucket}/{n.prefix}"
        check("create", source, n.function_arn, request, access.resource(n.function_arn, request))
    for rule in topology.receipt_rules:
        source = f"ses:{rule.name}"
        for bucket, prefix in rule.s3_actions:
            put = ses_puts_object(
                rule.region, rule.rule_set, rule.name, bucket, prefix + SES_SETUP_OBJECT
            )
            target = f"s3://{bucket}/{prefix}"
            check("create", source, target, put, access.resource(arns(rule.region).bucket(bucket), put))
        for function_arn, _ in rule.lambda_actions:
            invoke = ses_invokes(rule.region, rule.rule_set, rule.name, function_arn)
            check("create", source, function_arn, invoke, access.resource(function_arn, invoke))
    for r in topology.rules:
        arn = rule_arn(r.region, r.name, r.bus)
        for target, dlq, _ in r.targets:
            deliver = events_sends if ":sqs:" in target else events_invokes
            request = deliver(arn, target)
            check("deliver", f"rule:{r.name}", target, request, access.resource(target, request))
            if dlq:
                send = events_sends(arn, dlq)
                check("deliver", f"rule:{r.name}", dlq, send, access.resource(dlq, send))
    publishes = [
        (f"budget:{b.name}", budgets_publishes(b.name, topic))
        for b in topology.budgets
        for topic in b.topic_arns
    ] + [
        (f"alarm:{a.name}", cloudwatch_publishes(a.region, a.name, topic))
        for a in topology.alarms
        for topic in a.topic_arns
    ]
    for source, publish in publishes:
        decision, where, refused = access.topic_publish(publish)
        if not decision.allowed:
            refusal = Refusal(source, str(publish.resource), refused, where, decision.explicit_deny)
            found.append(Finding(refusal, "deliver"))
    return found
