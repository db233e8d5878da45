"""queue-consumers-paced: every SQS event source mapping caps its function's concurrency.

What: an event source mapping whose source is an SQS queue declares
``scalingConfig.maximumConcurrency`` (2 to 1,000).

Why: a queue is where a burst waits (a 10,000-line CSV is 10,000 leads on ler-intake-queue at
once), and without a cap Lambda scales an SQS consumer up to 1,250 concurrent invocations
(AWS Lambda Developer Guide, "Configuring scaling behavior for SQS event source mappings":
https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html). Every consumer here
calls something paid or rate-limited (Bedrock's per-minute quota, SES's sending rate, HubSpot's
API limits, End User Messaging's SMS throughput): uncapped, a burst meets those quotas and the
account's concurrency together, and the messages the quotas refuse go round their retries to
the DLQ. With a cap the queue holds the burst and drains it at the pace the service accepts;
messages wait, none is lost. The cap is the mapping's, not reserved concurrency, so it takes
nothing from the other functions.

Fix: give the ``QueueTrigger`` a ``maximum_concurrency`` sized to the service the function
calls (components/systems/*.py name each cap and its reason).
"""

from __future__ import annotations

from typing import Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.graph import Stack
from policies.common.props import as_str
from policies.common.rule import stack_policy

NAME: Final = "queue-consumers-paced"
MAPPING: Final = "aws:lambda/eventSourceMapping:EventSourceMapping"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    for node in stack.of_type(MAPPING):
        source = as_str(node.props.get("eventSourceArn")) or ""
        if not source.startswith("arn:") or source.split(":")[2:3] != ["sqs"]:
            continue  # a stream's mapping is paced by its shards (parallelizationFactor)
        scaling = node.props.get("scalingConfig") or {}
        cap = scaling.get("maximumConcurrency") if isinstance(scaling, dict) else None
        if isinstance(cap, int | float) and not isinstance(cap, bool) and 2 <= cap <= 1000:
            continue
        fn = stack.function_named(node.props.get("functionName"))
        who = fn.label if fn else str(node.props.get("functionName"))
        report(
            f"event source mapping {node.name} of {who} reads an SQS queue without a maximum "
            f"concurrency (scalingConfig.maximumConcurrency {cap!r}): a burst on the queue "
            "scales it to the account's concurrency and the quotas of what it calls",
            node.urn,
        )


POLICY: Final = stack_policy(
    NAME,
    "Every SQS event source mapping declares a maximum concurrency.",
    _validate,
    remediation=(
        "Give the QueueTrigger a maximum_concurrency (2-1000) sized to the quota of the service "
        "its function calls."
    ),
)
