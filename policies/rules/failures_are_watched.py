"""failures-are-watched: nothing can fail silently; every failure path ends at an alarm.

What, in every stack:
- every EventBridge Scheduler schedule has a ``target.deadLetterConfig``;
- every function a schedule, an EventBridge rule target or an S3 notification invokes (all
  asynchronous invokers) has a FunctionEventInvokeConfig with an ``onFailure`` destination;
- every alarm has an alarm action naming an SNS topic (somebody is told).

And in a stack with alarms (every ``prod`` stack, and any stack that declares one):
- every dead-letter or failure queue (of a redrive policy, an EventBridge target's or a
  schedule's ``deadLetterConfig``, a Lambda on-failure destination, or tagged
  ``crm:dead-letter-of``; the same list queue-hygiene reads) has an alarm on its
  ``ApproximateNumberOfMessagesVisible`` (dimension ``QueueName``) that fires on one message;
- every function has an ``Errors`` alarm (dimension ``FunctionName``) unless each way it is
  invoked keeps a final failure in such a watched queue: it has no Function URL (a URL's
  caller gets the error and nothing keeps it), it is invoked by something, and each of its SQS
  event sources has a watched dead-letter queue, each stream event source a watched
  on-failure destination, and, if it is invoked asynchronously, its on-failure destination is
  watched;
- every region whose alert topic an alarm notifies has a ``Throttles`` alarm on
  ``AWS/Lambda`` without dimensions (all the region's functions), unless every function has
  its own ``Throttles`` alarm.

A developer's stack (not ``prod``) may declare no alarm at all (stack config ``alarms:
none``): its failures still land in DLQs and on-failure destinations, and its errors in logs.

Why: issue 14, "a small business owner who deploys this should hear about a broken integration
the same day, by email"; issue 28, pay for that and not for alarms that repeat each other. A
dead-letter queue nobody watches only delays the loss; an asynchronous invocation that fails
after its retries is dropped unless it has a destination (AWS Lambda Developer Guide,
"Capturing records of Lambda asynchronous invocations":
https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html); a schedule
whose target cannot be invoked drops the event unless it has a DLQ (EventBridge Scheduler User
Guide, "Configuring a dead-letter queue for a schedule":
https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html). The SQS
page "Creating alarms for dead-letter queues using Amazon CloudWatch"
(https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/dead-letter-queues-alarms-cloudwatch.html)
names the metric. Lambda publishes ``Errors`` (timeouts included) and ``Throttles`` per
function and, without a dimension, aggregated over the region's functions (AWS Lambda
Developer Guide, "Types of metrics for Lambda functions":
https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html).

Fix: declare functions with ScopedLambda (it declares the Errors alarm where nothing keeps the
failure, and a failure queue for an asynchronously invoked function), queues with WorkQueue (it
watches its dead-letter queue), schedules with ScheduledJob (it gives the schedule a DLQ); the
stack declares one Throttles alarm per region. Never declare these by hand.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.config import ENVIRONMENT_SCHEMA, environment, schema
from policies.common.graph import Node, Stack, lambda_name, queue_name_of_arn
from policies.common.props import as_str, get_path
from policies.common.rule import config_of, stack_policy
from policies.rules.queue_hygiene import dead_letter_targets

NAME: Final = "failures-are-watched"
ALARM: Final = "aws:cloudwatch/metricAlarm:MetricAlarm"
FUNCTION: Final = "aws:lambda/function:Function"
SCHEDULE: Final = "aws:scheduler/schedule:Schedule"
EVENT_TARGET: Final = "aws:cloudwatch/eventTarget:EventTarget"
BUCKET_NOTIFICATION: Final = "aws:s3/bucketNotification:BucketNotification"
INVOKE_CONFIG: Final = "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig"
MAPPING: Final = "aws:lambda/eventSourceMapping:EventSourceMapping"
FUNCTION_URL: Final = "aws:lambda/functionUrl:FunctionUrl"
QUEUE: Final = "aws:sqs/queue:Queue"
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


@dataclass
class _Watched:
    functions: dict[str, set[str]] = field(default_factory=dict)
    """function -> its alarmed AWS/Lambda metrics"""
    queues: set[str] = field(default_factory=set)
    """queues with a depth alarm firing on one message"""
    regional: set[str] = field(default_factory=set)
    """AWS/Lambda metrics alarmed without a dimension (every function of a region), by region
    as ``metric@region``"""
    regions: set[str] = field(default_factory=set)
    """regions of the topics the alarms notify"""
    silent: list[Node] = field(default_factory=list)
    count: int = 0


def _topic_regions(alarm: Node) -> set[str]:
    actions = alarm.props.get("alarmActions")
    found: set[str] = set()
    for a in actions if isinstance(actions, list) else []:
        text = as_str(a) or ""
        parts = text.split(":")
        if len(parts) > 3 and parts[2] == "sns":
            found.add(parts[3])
    return found


def _watched(stack: Stack) -> _Watched:
    w = _Watched()
    for alarm in stack.of_type(ALARM):
        w.count += 1
        namespace = as_str(alarm.props.get("namespace"))
        metric = as_str(alarm.props.get("metricName"))
        notifies = _notifies(alarm)
        if not notifies:
            w.silent.append(alarm)
            continue
        w.regions |= _topic_regions(alarm)
        dims = alarm.props.get("dimensions")
        if namespace == "AWS/Lambda" and metric:
            if fn := _dimension(alarm, "FunctionName"):
                w.functions.setdefault(fn, set()).add(metric)
            elif not dims:
                w.regional |= {f"{metric}@{r}" for r in _topic_regions(alarm)}
        elif namespace == "AWS/SQS" and metric == DEPTH_METRIC:
            queue = _dimension(alarm, "QueueName")
            if queue and _fires_on_one(alarm):
                w.queues.add(queue)
    return w


def _kept(stack: Stack, watched: set[str], destinations: dict[str, str]) -> set[str]:
    """Functions each of whose invokers keeps a final failure in a watched queue."""
    with_url = {lambda_name(u.props.get("functionName")) for u in stack.of_type(FUNCTION_URL)}
    dlq_of: dict[str, str | None] = {}
    for queue in stack.of_type(QUEUE):
        redrive = queue.props.get("redrivePolicy")
        target = None
        if isinstance(redrive, str):
            try:
                target = queue_name_of_arn(json.loads(redrive).get("deadLetterTargetArn"))
            except ValueError:
                target = None
        if name := as_str(queue.props.get("name")):
            dlq_of[name] = target
    paths: dict[str, list[bool]] = {}
    for mapping in stack.of_type(MAPPING):
        fn = lambda_name(mapping.props.get("functionName"))
        source = as_str(mapping.props.get("eventSourceArn")) or ""
        if not fn:
            continue
        if source.startswith("arn:") and source.split(":")[2] == "sqs":
            dlq = dlq_of.get(source.rsplit(":", 1)[-1])
            paths.setdefault(fn, []).append(dlq is not None and dlq in watched)
        else:
            failure = queue_name_of_arn(
                get_path(mapping.props, "destinationConfig", "onFailure", "destinationArn")
            )
            paths.setdefault(fn, []).append(failure is not None and failure in watched)
    for fn in _async_targets(stack):
        paths.setdefault(fn, []).append(destinations.get(fn) in watched)
    return {fn for fn, kept in paths.items() if kept and all(kept) and fn not in with_url}


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


def _destinations(stack: Stack) -> dict[str, str]:
    """Function name -> the queue its failed asynchronous invocations go to."""
    found: dict[str, str] = {}
    for node in stack.of_type(INVOKE_CONFIG):
        destination = as_str(get_path(node.props, "destinationConfig", "onFailure", "destination"))
        if destination and (name := lambda_name(node.props.get("functionName"))):
            found[name] = queue_name_of_arn(destination) or destination
    return found


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    w = _watched(stack)
    for alarm in w.silent:
        report(
            f"alarm {as_str(alarm.props.get('name')) or alarm.name} has no alarm action naming "
            "an SNS topic: nobody hears it",
            alarm.urn,
        )
    for schedule in stack.of_type(SCHEDULE):
        if not as_str(get_path(schedule.props, "target", "deadLetterConfig", "arn")):
            report(
                f"schedule {as_str(schedule.props.get('name')) or schedule.name} has no "
                "dead-letter queue (target.deadLetterConfig)",
                schedule.urn,
            )
    destinations = _destinations(stack)
    names = {as_str(f.props.get("name")): f for f in stack.of_type(FUNCTION)}
    for name, invoker in sorted(_async_targets(stack).items()):
        if name in names and name not in destinations:
            report(
                f"function {name} is invoked asynchronously ({invoker}) but has no on-failure "
                "destination (FunctionEventInvokeConfig destinationConfig.onFailure)",
                names[name].urn,
            )
    env = environment(config_of(args), (r.urn for r in args.resources))
    if w.count == 0 and env != "prod":
        return  # a developer's stack without alarms: the failure paths above still hold
    kept = _kept(stack, w.queues, destinations)
    for fn in stack.of_type(FUNCTION):
        fn_name = as_str(fn.props.get("name"))
        if fn_name is None:
            continue
        if "Errors" not in w.functions.get(fn_name, set()) and fn_name not in kept:
            report(
                f"function {fn_name} has no Errors alarm, and not every way it is invoked keeps a "
                "final failure in a queue whose depth is alarmed",
                fn.urn,
            )
    per_function = all(
        "Throttles" in w.functions.get(as_str(f.props.get("name")) or "", set())
        for f in stack.of_type(FUNCTION)
    )
    if not per_function:
        for region in sorted(w.regions - {r.split("@", 1)[1] for r in w.regional if r.startswith("Throttles@")}):
            report(
                f"region {region} has no Throttles alarm on AWS/Lambda without dimensions (or one "
                "per function): a throttled invocation there goes unheard",
                None,
            )
    by_name: dict[str, Any] = {
        n: q for q in stack.of_type(QUEUE) if (n := as_str(q.props.get("name")))
    }
    for queue in sorted(dead_letter_targets(stack)):
        if queue in by_name and queue not in w.queues:
            report(
                f"dead-letter / failure queue {queue} has no alarm on {DEPTH_METRIC} > 0",
                by_name[queue].urn,
            )


POLICY: Final = stack_policy(
    NAME,
    "Every schedule has a DLQ, every asynchronously invoked function an on-failure destination, "
    "every alarm a topic; with alarms (always in prod): every dead-letter queue a depth alarm, "
    "every function an Errors alarm unless its failures all land in one, every region a "
    "Throttles alarm.",
    _validate,
    remediation=(
        "Declare functions with ScopedLambda, queues with WorkQueue and schedules with "
        "ScheduledJob: they declare the alarms, DLQs and destinations themselves."
    ),
    config_schema=schema(environment=ENVIRONMENT_SCHEMA["environment"]),
)
