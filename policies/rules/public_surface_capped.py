"""public-surface-capped: every function behind a public Function URL has a concurrency cap.

What: the function a Function URL with ``authorizationType`` other than ``AWS_IAM`` invokes
declares ``reservedConcurrentExecutions`` of at least 1 (0 would throttle every request; the
provider's -1 or an absent value means "no reservation", i.e. no cap). Seed names in
``uncappedPublicFunctions`` are let through: an account whose concurrency quota is too small to
reserve any (``make preflight`` says so) runs with the key off and is bounded by that quota.

Why: anyone can call a public URL, and a valid-looking flood is otherwise bounded only by the
account's concurrency (1,000 by default), billed per GB-second. Reserved concurrency is also
that function's maximum: past it Lambda throttles (``TooManyRequestsException``, reason
``ReservedFunctionConcurrentInvocationLimitExceeded``) and the URL answers 429 without running
the function (AWS Lambda Developer Guide, "Creating and managing Lambda function URLs",
throttling: https://docs.aws.amazon.com/lambda/latest/dg/urls-configuration.html; API
Reference, "PutFunctionConcurrency", which also keeps 100 unreserved per account and region:
https://docs.aws.amazon.com/lambda/latest/api/API_PutFunctionConcurrency.html).
A cap also keeps one surface's flood from taking the concurrency the other functions run on.

Fix: give the function ``reserved_concurrency`` (ScopedLambda takes the stack's
``publicConcurrency`` for every auth-NONE URL), or, on an account that cannot reserve, list it
in ``uncappedPublicFunctions``.
"""

from __future__ import annotations

from typing import Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.config import schema, string_list
from policies.common.graph import Stack
from policies.common.rule import config_of, stack_policy

NAME: Final = "public-surface-capped"
FUNCTION_URL: Final = "aws:lambda/functionUrl:FunctionUrl"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    uncapped = frozenset(config_of(args).get("uncappedPublicFunctions") or ())
    stack = Stack(args.resources)
    for node in stack.of_type(FUNCTION_URL):
        if node.props.get("authorizationType") == "AWS_IAM":
            continue
        fn = stack.function_named(node.props.get("functionName"))
        if fn is None:
            report(f"Function URL {node.name}: its function is not declared in this stack: "
                   "its concurrency cannot be judged", node.urn)
            continue
        if fn.seed in uncapped:
            continue
        cap = fn.node.props.get("reservedConcurrentExecutions")
        # The engine hands numbers over as floats (10.0).
        if not isinstance(cap, int | float) or isinstance(cap, bool) or cap < 1:
            report(
                f"function {fn.label} answers a public Function URL without a concurrency cap "
                f"(reservedConcurrentExecutions {cap!r}): a flood is bounded only by the "
                "account's concurrency",
                fn.node.urn,
            )


POLICY: Final = stack_policy(
    NAME,
    "Every function behind a public (auth NONE) Function URL has reserved concurrency.",
    _validate,
    remediation=(
        "Set reserved concurrency on the function (publicConcurrency in the stack), or list it "
        "in uncappedPublicFunctions where the account's quota cannot reserve."
    ),
    config_schema=schema(
        uncappedPublicFunctions=string_list(
            "Seed names of public functions allowed without reserved concurrency", ()
        ),
    ),
)
