"""AWS Budgets crossing a threshold: the notification published to the budget's SNS topics.

The sandbox has no billing data, so a scenario (or ``POST /budgets/notify``) says when a
budget crosses a threshold. The publish is then authorised as Budgets' own request
(``sandbox.service_requests.budgets_publishes``): the topic policy must admit
``budgets.amazonaws.com`` with the budget as source, and when the topic is KMS-encrypted, the
key policy must let that principal use the key (``topic_key_uses``). An AWS managed key
(``alias/aws/sns``) never does, so such a publish is refused, as in AWS, where the alarm is
silently lost. A publish admitted reaches the topic in the emulator and the outbox (the
topic's email subscribers would get it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.offline.engine import ACCOUNT_ID
from sandbox.iam import Requirement
from sandbox.service_requests import Refusal, budgets_publishes, topic_key_uses
from sandbox.standins import Message

if TYPE_CHECKING:
    from sandbox.graph import BudgetSpec
    from sandbox.standins import Outbox
    from sandbox.triggers import Triggers


def notify(
    triggers: Triggers,
    outbox: Outbox,
    budget: BudgetSpec,
    *,
    notification_type: str = "ACTUAL",
    threshold: float = 80.0,
) -> list[str]:
    """Publish one budget notification to each of the budget's topics; return the ARNs of
    the topics it reached (a refused topic is recorded in ``triggers.refusals``)."""
    from sandbox.triggers import Trace

    source = f"budget:{budget.name}"
    subject = f"AWS Budgets: {budget.name} has exceeded your alert threshold"
    text = (
        f"AWS Budget Notification\nAWS Account {ACCOUNT_ID}\n"
        f"Budget Name: {budget.name}\nAlert Type: {notification_type}\n"
        f"Alert Threshold: > {threshold:g}%"
    )
    reached: list[str] = []
    for topic_arn in budget.topic_arns:
        publish = budgets_publishes(budget.name, topic_arn)
        decision, where = triggers.access.resource(topic_arn, publish)
        if not decision.allowed:
            triggers.refuse(Refusal(source, topic_arn, publish, where, decision.explicit_deny))
            continue
        region = topic_arn.split(":")[3]
        key_ref = triggers.t.topic_keys.get(topic_arn)
        if key_ref and not _key_admits(triggers, source, topic_arn, key_ref, region, publish):
            continue
        triggers.client("sns", region).publish(TopicArn=topic_arn, Subject=subject, Message=text)
        outbox.messages.append(
            Message("sns", None, "budgets.amazonaws.com", (topic_arn,), subject, text)
        )
        triggers.traces.append(Trace("budget", source, topic_arn.rsplit(":", 1)[-1], subject))
        reached.append(topic_arn)
    return reached


def _key_admits(
    triggers: Triggers, source: str, topic_arn: str, key_ref: str, region: str, publish: Requirement
) -> bool:
    """Whether the topic's key lets the publishing service use it (SNS calls KMS as that
    service: ``kms:GenerateDataKey`` to publish, ``kms:Decrypt`` to deliver)."""
    key = triggers.t.key(key_ref)
    key_arn = key.arn if key else f"arn:aws:kms:{region}:{ACCOUNT_ID}:{key_ref}"
    for use in topic_key_uses(publish, key_arn):
        decision, where = triggers.access.key(key_ref, region, use)
        if not decision.allowed:
            triggers.refuse(Refusal(source, topic_arn, use, where, decision.explicit_deny))
            return False
    return True
