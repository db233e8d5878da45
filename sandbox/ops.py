"""What the owner would hear and see after a day: the alarms the sandbox can evaluate, and the
business metrics the day's invocations emitted.

Alarms: the sandbox has no CloudWatch, so it evaluates the alarms it can from the emulator's
state: the queue-depth alarms (``AWS/SQS`` ``ApproximateNumberOfMessagesVisible``, read as the
queue's ``ApproximateNumberOfMessages`` attribute, which is what that metric reports:
Amazon SQS Developer Guide, "Available CloudWatch metrics for Amazon SQS",
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html).
Each alarm is read from the graph, as declared, with its own comparison and threshold; the
Lambda alarms (errors, duration...) need CloudWatch's metric stream and are not evaluated here.

Metrics: Powertools writes each metric as an EMF JSON line on the handler's stdout; the
sandbox keeps each invocation's output, so the day's metrics are parsed back from those lines
(``handlers.common.metrics.emf_metrics``), exactly what CloudWatch Logs would extract.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from handlers.common.metrics import CATALOGUE, emf_metrics

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
DEPTH = "ApproximateNumberOfMessagesVisible"
_COMPARE = {
    "GreaterThanThreshold": lambda v, t: v > t,
    "GreaterThanOrEqualToThreshold": lambda v, t: v >= t,
    "LessThanThreshold": lambda v, t: v < t,
    "LessThanOrEqualToThreshold": lambda v, t: v <= t,
}


@dataclass(frozen=True)
class AlarmState:
    """One evaluated queue-depth alarm."""

    name: str
    queue: str
    visible: int
    comparison: str
    threshold: float
    actions: tuple[str, ...]

    @property
    def in_alarm(self) -> bool:
        return bool(_COMPARE[self.comparison](self.visible, self.threshold))

    def line(self) -> str:
        state = "ALARM" if self.in_alarm else "OK"
        notify = f" -> email via {', '.join(a.rsplit(':', 1)[-1] for a in self.actions)}"
        return f"{state} {self.name} ({self.queue}: {self.visible} visible){notify if self.in_alarm else ''}"


def evaluate_alarms(sb: Any) -> list[AlarmState]:
    """Every queue-depth alarm of the graph, against the emulator's queues now."""
    found: list[AlarmState] = []
    for alarm in sb.graph.of_type(ALARM):
        i = alarm.inputs
        if i.get("namespace") != "AWS/SQS" or i.get("metricName") != DEPTH:
            continue
        queue = (i.get("dimensions") or {}).get("QueueName", "")
        spec = next((q for q in sb.topology.queues if q.name == queue), None)
        if spec is None:
            continue
        sqs = sb.internal("sqs", spec.region)
        url = sqs.get_queue_url(QueueName=queue)["QueueUrl"]
        attributes = sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        found.append(
            AlarmState(
                str(i.get("name")),
                queue,
                int(attributes["ApproximateNumberOfMessages"]),
                str(i.get("comparisonOperator")),
                float(i.get("threshold") or 0),
                tuple(i.get("alarmActions") or ()),
            )
        )
    return sorted(found, key=lambda a: a.name)


_BUSINESS = {m.name for metrics in CATALOGUE.values() for m in metrics}


def _cold(line: str) -> bool:
    """A structured log line of an invocation that started its container."""
    try:
        doc = json.loads(line)
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("cold_start") is True


def day_metrics(invocations: Iterable[Any], prefix: str, system: str) -> Counter[str]:
    """Sum of each business metric the system's invocations emitted, keyed ``Name{dim=v}``."""
    totals: Counter[str] = Counter()
    own = f"{prefix}-{system}-"
    for invocation in invocations:
        if not invocation.function.startswith(own):
            continue
        for line in (invocation.logs or "").splitlines():
            for _namespace, name, value, dims in emf_metrics(line):
                extra = {k: v for k, v in dims.items() if k not in {"service", "function_name"}}
                if name not in _BUSINESS:
                    continue
                label = name + ("{" + ",".join(f"{k}={v}" for k, v in extra.items()) + "}" if extra else "")
                totals[label] += int(value)
    return totals


def report_day(sb: Any, report: Any, system: str, since: int) -> None:
    """Print the day's business metrics and the system's alarms in ALARM."""
    runtime = sb.runtime
    invocations = runtime.invocations[since:] if runtime is not None else []
    totals = day_metrics(invocations, sb.prefix, system)
    cold = sum(
        1
        for inv in invocations
        if inv.function.startswith(f"{sb.prefix}-{system}-")
        and any(_cold(line) for line in (inv.logs or "").splitlines())
    )
    shown = ", ".join(f"{k} {v}" for k, v in sorted(totals.items())) or "(none)"
    report.line(f"  metrics  {shown}; cold starts {cold}")
    own = f"{sb.prefix}-{system}-"
    firing = [a for a in evaluate_alarms(sb) if a.in_alarm and a.queue.startswith(own)]
    for alarm in firing:
        report.line(f"  alarm    {alarm.line()}")
    if not firing:
        report.line("  alarms   no queue-depth alarm of this system is in ALARM")
