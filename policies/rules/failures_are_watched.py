"""failures-are-watched: nothing can fail silently; every failure path ends at an alarm.

What:
- every Lambda function has three CloudWatch alarms on its ``AWS/Lambda`` metrics (dimension
  ``FunctionName``): ``Errors``, ``Throttles`` and ``Duration``;
- every SQS queue that is a dead-letter or failure target (of a redrive policy, an EventBridge
  target's or a schedule's ``deadLetterConfig``, a Lambda on-failure destination, or tagged
  ``crm:dead-letter-of``; the same list queue-hygiene reads) has an alarm on its
  ``ApproximateNumberOfMessagesVisible`` (dimension ``QueueName``) that fires on one message
  (``GreaterThanThreshold`` 0 or ``GreaterThanOrEqualToThreshold`` 1);
- every EventBridge Scheduler schedule has a ``target.deadLetterConfig``;
- every function a schedule, an EventBridge rule target or an S3 notification invokes (all
  asynchronous invokers) has a FunctionEventInvokeConfig with an ``onFailure`` destination;
- every one of these alarms has an alarm action naming an SNS topic (somebody is told).

Why: issue 14, "a small business owner who deploys this should hear about a broken integration
the same day, by email". A dead-letter queue nobody watches only delays the loss; an
asynchronous invocation that fails after its retries is dropped unless it has a destination
(AWS Lambda Developer Guide, "Capturing records of Lambda asynchronous invocations":
https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html); a schedule
whose target cannot be invoked drops the event unless it has a DLQ (EventBridge Scheduler User
Guide, "Configuring a dead-letter queue for a schedule":
https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html). The SQS
page "Creating alarms for dead-letter queues using Amazon CloudWatch"
(https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/dead-letter-queues-alarms-cloudwatch.html)
names the metric.

Fix: declare functions with ScopedLambda (it declares the three alarms, and a failure queue for
an asynchronously invoked function), queues with WorkQueue (it watches its dead-letter queue)
and schedules with ScheduledJob (it gives the schedule a DLQ). Never declare these by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.graph import Node, Stack, lambda_name
from policies.common.props import as_str, get_path
from policies.common.rule import stack_policy
from policies.rules.queue_hygiene import dead_letter_targets

NAME: Final = "failures-are-watched"
ALARM: Final = "aws:cloudwatch/metricAlarm:MetricAlarm"
FUNCTION: Final = "aws:lambda/function:Function"
SCHEDULE: Final = "aws:scheduler/schedule:Schedule"
EVENT_TARGET: Final = "aws:cloudwatch/eventTarget:EventTarget"
BUCKET_NOTIFICATION: Final = "aws:s3/bucketNotification:BucketNotification"
INVOKE_CONFIG: Final = "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig"
FUNCTION_METRICS: Final = ("Errors", "Throttles", "Duration")
DEPTH_METRIC: Final = "ApproximateNumberOfMessagesVisible"


def _dimension(alarm: Node, key: str) -> str | None:
    dims = alarm.props.get("dimensions")
    return as_str(dims.get(key)) if isinstance(dims, Mapping) else None


def _notifies(alarm: Node) -> bool:
    actions = alarm.props.get("alarmActions")
    return isinstance(actions, list) and any(
        (text := as_str(a)) is not None and text.startswith("arn:") and text.split(":")[2] == "sns"
        for a in actions
    )


def _fires_on_one(alarm: Node) -> bool:
    operator = as_str(alarm.props.get("comparisonOperator"))
    threshold = alarm.props.get("threshold")
    if not isinstance(threshold, int | float) or isinstance(threshold, bool):
        return False
    return (operator == "GreaterThanThreshold" and threshold < 1) or (
        operator == "GreaterThanOrEqualToThreshold" and threshold <= 1
    )


def _watched(stack: Stack) -> tuple[dict[str, set[str]], set[str], list[Node]]:
    """(function -> its alarmed metrics, queues with a depth alarm, alarms without action)."""
    functions: dict[str, set[str]] = {}
    queues: set[str] = set()
    silent: list[Node] = []
    for alarm in stack.of_type(ALARM):
        namespace = as_str(alarm.props.get("namespace"))
        metric = as_str(alarm.props.get("metricName"))
        notifies = _notifies(alarm)
        if namespace == "AWS/Lambda" and (fn := _dimension(alarm, "FunctionName")):
            if not notifies:
                silent.append(alarm)
            elif metric:
                functions.setdefault(fn, set()).add(metric)
        elif namespace == "AWS/SQS" and metric == DEPTH_METRIC:
            queue = _dimension(alarm, "QueueName")
            if not notifies:
                silent.append(alarm)
            elif queue and _fires_on_one(alarm):
                queues.add(queue)
    return functions, queues, silent


def _async_targets(stack: Stack) -> dict[str, str]:
    """Function name -> what invokes it asynchronously."""
    found: dict[str, str] = {}
    for node in stack.of_type(SCHEDULE):
        if name := lambda_name(get_path(node.props, "target", "arn")):
            found.setdefault(name, f"schedule {as_str(node.props.get('name')) or node.name}")
    for node in stack.of_type(EVENT_TARGET):
        arn = as_str(node.props.get("arn")) or ""
        if ":lambda:" in arn and (name := lambda_name(arn)):
            found.setdefault(name, f"EventBridge rule {as_str(node.props.get('rule')) or node.name}")
    for node in stack.of_type(BUCKET_NOTIFICATION):
        for entry in node.props.get("lambdaFunctions") or []:
            if isinstance(entry, Mapping) and (name := lambda_name(entry.get("lambdaFunctionArn"))):
                found.setdefault(name, f"S3 notifications of {as_str(node.props.get('bucket'))}")
    return found


def _with_destination(stack: Stack) -> set[str]:
    found: set[str] = set()
    for node in stack.of_type(INVOKE_CONFIG):
        destination = as_str(get_path(node.props, "destinationConfig", "onFailure", "destination"))
        if destination and (name := lambda_name(node.props.get("functionName"))):
            found.add(name)
    return found


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    functions, queues, silent = _watched(stack)
    for alarm in silent:
        report(
            f"alarm {as_str(alarm.props.get('name')) or alarm.name} has no alarm action naming "
            "an SNS topic: nobody hears it",
            alarm.urn,
        )
    for fn in stack.of_type(FUNCTION):
        name = as_str(fn.props.get("name"))
        if name is None:
            continue
        missing = [m for m in FUNCTION_METRICS if m not in functions.get(name, set())]
        if missing:
            report(f"function {name} has no alarm on {', '.join(missing)}", fn.urn)
    by_name: dict[str, Any] = {
        n: q for q in stack.of_type("aws:sqs/queue:Queue") if (n := as_str(q.props.get("name")))
    }
    for queue in sorted(dead_letter_targets(stack)):
        if queue in by_name and queue not in queues:
            report(
                f"dead-letter / failure queue {queue} has no alarm on {DEPTH_METRIC} > 0",
                by_name[queue].urn,
            )
    for schedule in stack.of_type(SCHEDULE):
        if not as_str(get_path(schedule.props, "target", "deadLetterConfig", "arn")):
            report(
                f"schedule {as_str(schedule.props.get('name')) or schedule.name} has no "
                "dead-letter queue (target.deadLetterConfig)",
                schedule.urn,
            )
    destinations = _with_destination(stack)
    names = {as_str(f.props.get("name")): f for f in stack.of_type(FUNCTION)}
    for name, invoker in sorted(_async_targets(stack).items()):
        if name in names and name not in destinations:
            report(
                f"function {name} is invoked asynchronously ({invoker}) but has no on-failure "
                "destination (FunctionEventInvokeConfig destinationConfig.onFailure)",
                names[name].urn,
            )


POLICY: Final = stack_policy(
    NAME,
    "Every function has error, throttle and duration alarms; every dead-letter queue a depth "
    "alarm; every schedule a DLQ; every asynchronously invoked function an on-failure "
    "destination; every alarm notifies a topic.",
    _validate,
    remediation=(
        "Declare functions with ScopedLambda, queues with WorkQueue and schedules with "
        "ScheduledJob: they declare the alarms, DLQs and destinations themselves."
    ),
)
