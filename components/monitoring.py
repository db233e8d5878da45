"""Alarms the building blocks declare for themselves, and the stack's observability settings.

No system declares an alarm by hand: a WorkQueue watches its dead-letter queue (and the age of
its oldest message), a ScopedLambda its errors where no alarmed queue keeps its failures, a
ScheduledJob its target's "did not run"; the stack watches throttles once per region. Each
alarm notifies the alert topic of its own region, because an alarm action must name a topic in
the alarm's region. The stack's alarm profile (``alarms`` in stack config) may turn them all
off for a developer's stack.

What is not alarmed, and why (each a CloudWatch alarm metric, $0.10 a month):

- Duration near the timeout: a timeout is an error (``Errors`` counts it), and an error pages
  where nothing else keeps the failure; a slow function that finishes lost no work.
- Errors of a function whose every failure lands in an alarmed queue (an SQS consumer whose
  queue has a watched DLQ, an asynchronously invoked function with a watched on-failure
  destination, a stream consumer with a watched on-failure queue): the failure pages once it
  is final, after the retries, instead of at each transient error that a retry recovers.
  A function with a Function URL answers its caller and keeps nothing, so it keeps ``Errors``.
- Throttles per function: one alarm on the region's dimensionless ``Throttles``.

Governing pages:

- CloudWatch API Reference, PutMetricAlarm, ``AlarmActions``:
  https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html
  (an SNS action is ``arn:aws:sns:region:account-id:sns-topic-name``; the alarm name is unique
  "within the Region"). Alarms are regional and the topic admits CloudWatch for
  ``arn:aws:cloudwatch:<its region>:<account>:alarm:*`` (components/alert_topic.py), so each
  alarm notifies the topic of its own region; I found no page promising cross-Region actions.
- CloudWatch API Reference, PutMetricAlarm, ``Period`` and ``EvaluationPeriods``:
  https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html
  ("Period multiplied by EvaluationPeriods can't be more than 604,800 seconds. For alarms with
  a period of less than one hour, the total evaluation period can't be longer than one day").
- CloudWatch User Guide, "Configuring how CloudWatch alarms treat missing data":
  https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html#alarms-and-missing-data
  (a "did not run" alarm treats missing data as breaching: no invocation means no data point).
- Amazon SQS Developer Guide, "Creating alarms for dead-letter queues using Amazon CloudWatch":
  https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/dead-letter-queues-alarms-cloudwatch.html
  (``ApproximateNumberOfMessagesVisible`` of the DLQ above zero).
- AWS Lambda Developer Guide, "Using CloudWatch metrics with Lambda" (Errors, Throttles,
  Duration, Invocations in ``AWS/Lambda`` by ``FunctionName``):
  https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import pulumi
import pulumi_aws as aws

MAX_EVALUATION_S = 7 * 24 * 3600
"""PutMetricAlarm: Period x EvaluationPeriods <= 604,800 s."""
MAX_EVALUATION_SHORT_PERIOD_S = 24 * 3600
"""PutMetricAlarm: with a Period under one hour, at most one day in total."""
MAX_PERIOD_S = 24 * 3600
"""The longest period used here: one day (CloudWatch keeps 1-hour data 455 days)."""

AlarmKind = Literal[
    "dlq-depth", "queue-age", "errors", "throttles", "not-run", "degraded",
    "unconfirmed-send", "spend-cap",
]

AlarmProfile = Literal["failures", "none"]
"""``failures``: every way work is lost or stuck pages someone. ``none``: no alarm at all (a
developer's stack: failures still land in DLQs and on-failure destinations, errors in logs)."""

ALARM_KINDS: Mapping[AlarmKind, str] = {
    "dlq-depth": "a dead-letter or failure queue holds a message: something failed after all retries",
    "queue-age": "the oldest message of a work queue waits too long: its consumer is stuck or failing",
    "errors": "the function raised (an invocation failed) and nothing downstream keeps the failure",
    "throttles": "Lambda refused invocations for concurrency somewhere in the region",
    "not-run": "a scheduled function was not invoked within two of its schedule intervals",
    "degraded": "a fallback was taken that must not be silent: Bedrock refused the model "
    "(model access not granted), Shopify redacted a customer, or HubSpot refused a lead for a "
    "required property; the owner's next digest names it and what to do",
    "unconfirmed-send": "a message to a customer was claimed but never confirmed sent",
    "spend-cap": "a daily spend cap (model calls, enrichment lookups or SMS) was reached today: "
    "past it the work takes the rules path or waits for the next UTC day",
}
"""What each alarm kind means; docs/operations.md has one runbook line per kind."""


@dataclass(frozen=True)
class Monitoring:
    """Observability settings of one deployment (region).

    Attributes:
        alarm_topic_arn: The alert topic of this region that every alarm notifies; empty in
            block tests that have no topic (the alarms are still declared).
        namespace: CloudWatch namespace of the business metrics, ``crm/<prefix>``.
        tracing: X-Ray active tracing and the Powertools Tracer on every function.
        alarms: Which alarms the blocks declare (:data:`AlarmProfile`).
        business_metrics: Whether the handlers emit the business metrics (EMF lines).
        registry: What the blocks declared, for the stack's dashboard.
    """

    alarm_topic_arn: str = ""
    namespace: str = "crm/test"
    tracing: bool = False
    alarms: AlarmProfile = "failures"
    business_metrics: bool = True
    registry: DashboardRegistry = field(default_factory=lambda: DashboardRegistry(), compare=False)


@dataclass
class DashboardRegistry:
    """Functions and queues per system, recorded by the blocks as they are declared."""

    functions: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """system -> [(function physical name, region)]"""
    queues: dict[str, list[tuple[str, str, bool]]] = field(default_factory=dict)
    """system -> [(queue physical name, region, is a dead-letter/failure queue)]"""
    degradable: list[str] = field(default_factory=list)
    """Systems that count degradations (``Deployment.watch_degradations``)."""

    def function(self, system: str, name: str, region: str) -> None:
        self.functions.setdefault(system, []).append((name, region))

    def queue(self, system: str, name: str, region: str, *, dead_letter: bool) -> None:
        self.queues.setdefault(system, []).append((name, region, dead_letter))


@dataclass(frozen=True)
class AlarmSpec:
    """One CloudWatch metric alarm on an AWS metric.

    Attributes:
        kind: Which kind of alarm (the runbook line it maps to).
        namespace: ``AWS/Lambda``, ``AWS/SQS``.
        metric: Metric name.
        dimensions: ``FunctionName`` or ``QueueName`` and its physical name.
        statistic: ``Sum``, ``Maximum``... or a percentile such as ``p95``.
        comparison: CloudWatch comparison operator.
        threshold: Threshold value.
        period_s: Period, a multiple of 60 s.
        evaluation_periods: Periods evaluated.
        datapoints_to_alarm: Breaching periods needed (M of N); default all.
        missing: How missing data is treated.
    """

    kind: AlarmKind
    namespace: str
    metric: str
    dimensions: Mapping[str, str]
    statistic: str
    comparison: str
    threshold: float
    period_s: int = 300
    evaluation_periods: int = 1
    datapoints_to_alarm: int | None = None
    missing: Literal["breaching", "notBreaching", "ignore", "missing"] = "notBreaching"

    def __post_init__(self) -> None:
        if self.period_s % 60 or self.period_s > MAX_PERIOD_S:
            raise ValueError(f"alarm period {self.period_s}s is not a multiple of 60 up to a day")
        total = self.period_s * self.evaluation_periods
        limit = MAX_EVALUATION_SHORT_PERIOD_S if self.period_s < 3600 else MAX_EVALUATION_S
        if total > limit:
            raise ValueError(f"alarm evaluates {total}s, beyond CloudWatch's limit of {limit}s")


def declare_alarm(
    resource_name: str,
    alarm_name: str,
    spec: AlarmSpec,
    description: str,
    monitoring: Monitoring,
    tags: Mapping[str, str],
    parent: pulumi.Resource,
) -> aws.cloudwatch.MetricAlarm | None:
    """The alarm, notifying the region's alert topic on ALARM and on recovery (OK); None in
    a stack whose alarm profile is ``none``."""
    if monitoring.alarms == "none":
        return None
    actions = [monitoring.alarm_topic_arn] if monitoring.alarm_topic_arn else []
    percentile = spec.statistic.startswith("p")
    return aws.cloudwatch.MetricAlarm(
        resource_name,
        name=alarm_name,
        alarm_description=f"{description} ({ALARM_KINDS[spec.kind]}). Runbook: docs/operations.md, "
        f"alarm kind {spec.kind}.",
        namespace=spec.namespace,
        metric_name=spec.metric,
        dimensions=dict(spec.dimensions),
        statistic=None if percentile else spec.statistic,
        extended_statistic=spec.statistic if percentile else None,
        comparison_operator=spec.comparison,
        threshold=spec.threshold,
        period=spec.period_s,
        evaluation_periods=spec.evaluation_periods,
        datapoints_to_alarm=spec.datapoints_to_alarm,
        treat_missing_data=spec.missing,
        alarm_actions=actions,
        ok_actions=actions,
        tags={**tags, "crm:alarm-kind": spec.kind},
        opts=pulumi.ResourceOptions(parent=parent),
    )


# The specs each block uses -------------------------------------------------------------------


def queue_depth(queue_name: str) -> AlarmSpec:
    """Any message visible in a dead-letter or failure queue."""
    return AlarmSpec(
        "dlq-depth",
        "AWS/SQS",
        "ApproximateNumberOfMessagesVisible",
        {"QueueName": queue_name},
        "Maximum",
        "GreaterThanThreshold",
        0,
    )


def queue_age(queue_name: str, max_age_s: int) -> AlarmSpec:
    """The oldest message of a work queue older than ``max_age_s``."""
    return AlarmSpec(
        "queue-age",
        "AWS/SQS",
        "ApproximateAgeOfOldestMessage",
        {"QueueName": queue_name},
        "Maximum",
        "GreaterThanThreshold",
        max_age_s,
    )


def function_errors(function_name: str) -> AlarmSpec:
    """Any error of one function (a timeout counts as an error in ``Errors``)."""
    return AlarmSpec(
        "errors", "AWS/Lambda", "Errors", {"FunctionName": function_name}, "Sum",
        "GreaterThanThreshold", 0,
    )


def degraded(namespace: str, system: str) -> AlarmSpec:
    """The system's ``Degraded`` count (EMF, handlers/common/metrics.py) above 0 in an hour: a
    fallback that must not be silent was taken in one of its functions. One alarm per system,
    not one per function and kind: every degradation is also counted as ``Degraded`` for its
    system, the per-kind metrics (``ModelRefused``, ``CustomerRedacted``, ``CrmRejected``) say
    which on the dashboard, and the owner's next digest names it with what to do. Bedrock
    answers AccessDeniedException until model access is granted (Bedrock User Guide, "Access
    Amazon Bedrock foundation models":
    https://docs.aws.amazon.com/bedrock/latest/userguide/model-access.html)."""
    return AlarmSpec(
        "degraded", namespace, "Degraded", {"service": system},
        "Sum", "GreaterThanThreshold", 0, period_s=3600,
    )


def spend_cap(namespace: str, system: str) -> AlarmSpec:
    """The system's ``SpendCapReached`` (EMF, handlers/common/spend.py) above 0 in five minutes.
    It is counted once per cap and UTC day, by the one function whose conditional write marked
    the day told, so each cap reached sends one notification a day (the alarm returns to OK in
    the next empty period); ``SpendCapped`` on the dashboard counts every call held back."""
    return AlarmSpec(
        "spend-cap", namespace, "SpendCapReached", {"service": system},
        "Sum", "GreaterThanThreshold", 0, period_s=300,
    )


def regional_throttles() -> AlarmSpec:
    """Any throttle of any function in the region: Lambda also publishes ``Throttles`` without
    a dimension, aggregated over the region's functions (one alarm metric instead of one per
    function; a throttled function is named by its own ``Throttles`` in the console)."""
    return AlarmSpec("throttles", "AWS/Lambda", "Throttles", {}, "Sum", "GreaterThanThreshold", 0)


def unconfirmed_sends(namespace: str, system: str, metric: str) -> AlarmSpec:
    """Any message to a customer its sweep reported claimed and never confirmed sent (a
    business metric of ``handlers.common.metrics``, counted once per message)."""
    return AlarmSpec(
        "unconfirmed-send",
        namespace,
        metric,
        {"service": system},
        "Sum",
        "GreaterThanThreshold",
        0,
        period_s=3600,
    )


_RATE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
_CRON = re.compile(r"^cron\((\S+) (\S+) (\S+) (\S+) (\S+) (\S+)\)$")
_UNIT_S = {"minute": 60, "hour": 3600, "day": 86400}


def schedule_interval_s(expression: str) -> int | None:
    """Seconds between two firings of a rate or a daily/weekly cron; None if irregular."""
    if m := _RATE.match(expression):
        return int(m.group(1)) * _UNIT_S[m.group(2).rstrip("s")]
    if m := _CRON.match(expression):
        minute, hour, dom, month, dow, _year = m.groups()
        single = minute.isdigit() and hour.isdigit() and month == "*"
        if single and dom in {"*", "?"} and dow in {"*", "?"}:
            return 86400
        if single and dom == "?" and re.fullmatch(r"[A-Za-z]{3}|[1-7]", dow):
            return 7 * 86400
    return None


def not_run(function_name: str, expression: str) -> AlarmSpec | None:
    """No invocation within two schedule intervals, where CloudWatch can evaluate that window.

    Two intervals, not one: a firing may land on either side of a period boundary. The window
    must fit PutMetricAlarm's limits; weekly jobs (14 days) and one-off ``at()`` schedules get
    no such alarm (their failures still reach the schedule DLQ and the function's errors).
    """
    interval = schedule_interval_s(expression)
    if interval is None:
        return None
    window = 2 * interval
    if window < 3600:
        period, periods = math.ceil(window / 60) * 60, 1
    else:
        period = min(window, MAX_PERIOD_S)
        period = math.ceil(period / 60) * 60
        periods = math.ceil(window / period)
    limit = MAX_EVALUATION_SHORT_PERIOD_S if period < 3600 else MAX_EVALUATION_S
    if period * periods > limit:
        return None
    return AlarmSpec(
        "not-run",
        "AWS/Lambda",
        "Invocations",
        {"FunctionName": function_name},
        "Sum",
        "LessThanThreshold",
        1,
        period_s=period,
        evaluation_periods=periods,
        missing="breaching",
    )
