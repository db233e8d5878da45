"""AWS services publishing alerts to SNS: a budget crossing a threshold, an alarm changing state.

The sandbox has no billing data and no metrics, so a scenario (or ``POST /budgets/notify``,
``POST /alarms/<name>/notify``) says when it happens. The publish is then authorised as the
service's own request (``sandbox.service_requests.budgets_publishes`` /
``cloudwatch_publishes``): the topic policy must admit the service principal with its source,
and when the topic is KMS-encrypted the key policy must let that principal use the key
(``topic_key_uses``). An AWS managed key (``alias/aws/sns``) never does, so such a publish is
refused, as in AWS, where the alert is silently lost. A publish admitted reaches the topic in
the emulator and the outbox (the topic's email subscribers would get it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.offline.engine import ACCOUNT_ID
from sandbox.iam import Requirement
from sandbox.service_requests import Refusal, budgets_publishes, cloudwatch_publishes
from sandbox.standins import Message
from sandbox.traces import Trace

if TYPE_CHECKING:
    from sandbox.graph import AlarmSpec, BudgetSpec
    from sandbox.standins import Outbox
    from sandbox.triggers import Triggers


def budget_notification(
    triggers: Triggers,
    outbox: Outbox,
    budget: BudgetSpec,
    *,
    notification_type: str = "ACTUAL",
    threshold: float = 80.0,
) -> list[str]:
    """Publish one budget notification to each of the budget's topics; return the ARNs of
    the topics it reached (a refused topic is recorded in ``triggers.refusals``)."""
    subject = f"AWS Budgets: {budget.name} has exceeded your alert threshold"
    text = (
        f"AWS Budget Notification\nAWS Account {ACCOUNT_ID}\n"
        f"Budget Name: {budget.name}\nAlert Type: {notification_type}\n"
        f"Alert Threshold: > {threshold:g}%"
    )
    return [
        topic
        for topic in budget.topic_arns
        if publish(
            triggers,
            outbox,
            f"budget:{budget.name}",
            budgets_publishes(budget.name, topic),
            subject,
            text,
        )
    ]


def alarm_notification(
    triggers: Triggers, outbox: Outbox, alarm: AlarmSpec, *, state: str = "ALARM"
) -> list[str]:
    """The alarm enters ``state``: publish to each topic of its actions; return those reached."""
    subject = f'{state}: "{alarm.name}" in {alarm.region}'
    text = f"You are receiving this email because your Amazon CloudWatch Alarm {alarm.name} " + (
        f"in the {alarm.region} region has entered the {state} state."
    )
    return [
        topic
        for topic in alarm.topic_arns
        if publish(
            triggers,
            outbox,
            f"alarm:{alarm.name}",
            cloudwatch_publishes(alarm.region, alarm.name, topic),
            subject,
            text,
        )
    ]


def publish(
    triggers: Triggers, outbox: Outbox, source: str, request: Requirement, subject: str, text: str
) -> bool:
    """One service publish to one topic, if the topic's policy and key admit it."""
    assert request.resource is not None
    topic_arn = request.resource
    decision, where, refused = triggers.access.topic_publish(request)
    if not decision.allowed:
        triggers.refuse(Refusal(source, topic_arn, refused, where, decision.explicit_deny))
        return False
    region = topic_arn.split(":")[3]
    triggers.client("sns", region).publish(TopicArn=topic_arn, Subject=subject, Message=text)
    sender = request.principal or "?"
    outbox.messages.append(Message("sns", None, sender, (topic_arn,), subject, text))
    triggers.traces.append(Trace("alert", source, topic_arn.rsplit(":", 1)[-1], subject))
    return True
