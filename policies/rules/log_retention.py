"""log-retention: every function logs to a group of its own stack with 7-day retention.

What: for each Lambda function, its log group (``loggingConfig.logGroup``, or
``/aws/lambda/<name>`` when none is set) is declared in the stack as a CloudWatch LogGroup with
``retentionInDays`` equal to ``retentionDays`` (default 7).

Why: "CloudWatch Logs at 7-day retention" (all five documents). A group Lambda creates on its
own keeps logs forever, and forever-logs are both a cost and a store of personal data.

Fix: declare the group with ``retention_in_days=7`` before the function (ScopedLambda does)
and point ``logging_config.log_group`` at it.
"""

from __future__ import annotations

from typing import Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.config import get_int, schema
from policies.common.graph import Stack
from policies.common.props import as_str, get_path
from policies.common.rule import config_of, stack_policy

NAME: Final = "log-retention"
LOG_GROUP: Final = "aws:cloudwatch/logGroup:LogGroup"
DEFAULT_DAYS: Final = 7


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    days = get_int(config_of(args), "retentionDays", DEFAULT_DAYS)
    stack = Stack(args.resources)
    groups = {
        name: node for node in stack.of_type(LOG_GROUP) if (name := as_str(node.props.get("name")))
    }
    for fn in stack.functions:
        configured = get_path(fn.node.props, "loggingConfig", "logGroup")
        group = as_str(configured) or (
            f"/aws/lambda/{fn.physical_name}" if fn.physical_name and configured is None else None
        )
        if group is None:
            report(
                f"function {fn.label}: its log group is not a known name: cannot be judged",
                fn.node.urn,
            )
            continue
        node = groups.get(group)
        if node is None:
            report(
                f"function {fn.label} logs to {group}, which this stack does not declare (Lambda "
                "would create it with no retention)",
                fn.node.urn,
            )
            continue
        retention = node.props.get("retentionInDays")
        if retention != days:
            report(
                f"log group {group} of {fn.label} keeps logs {retention!r} days, not {days}",
                node.urn,
            )


POLICY: Final = stack_policy(
    NAME,
    "Every function's log group is declared with 7-day retention.",
    _validate,
    remediation="Declare the function's log group with retention_in_days=7 and log to it.",
    config_schema=schema(
        retentionDays={
            "type": "integer",
            "description": "Required retention of function log groups, in days",
            "default": DEFAULT_DAYS,
        }
    ),
)
