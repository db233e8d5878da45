"""scheduler-trust: a role Scheduler assumes is trusted for exactly its schedules' group.

What: every IAM role whose trust policy admits ``scheduler.amazonaws.com`` (an Allow of
``sts:AssumeRole``) carries, with positive operators,
- ``aws:SourceAccount`` equal to a concrete account id, and
- ``aws:SourceArn`` whose every value is a schedule-group ARN,
  ``arn:<partition>:scheduler:<region>:<account>:schedule-group/<group>`` with a concrete group
  name: not a schedule ARN (``...:schedule/<group>/<name>``), not a schedule-name prefix
  (``...:schedule/<group>/*``), not another service's ARN;
and every schedule of the stack whose target ``roleArn`` is that role lives in a group the
trust names (``groupName``, ``default`` when absent), in the trust's account.

Why: EventBridge Scheduler assumes the execution role with ``aws:SourceAccount`` = the account
and ``aws:SourceArn`` = the ARN of the schedule's *group* in the request context. EventBridge
Scheduler User Guide, "Confused deputy prevention in EventBridge Scheduler"
(https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html):
"The value of aws:SourceArn must be your EventBridge Scheduler schedule group ARN ... Do not
scope the aws:SourceArn statement to a specific schedule or a schedule name prefix. The ARN you
specify must be a schedule group." A trust scoped otherwise never matches: Scheduler cannot
assume the role, and the schedule silently never runs (issue 12, defect 2).

Fix: declare one schedule group per system (``components.scheduled_job.schedule_group``) and
build the trust with ``components.scheduled_job.scheduler_trust_policy``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.documents import parse_statements, principals, role_name_of
from policies.common.graph import Stack
from policies.common.props import as_str, get_path, is_unknown
from policies.common.rule import stack_policy
from policies.common.service_access import arn_covers, condition_values

NAME: Final = "scheduler-trust"
SCHEDULER: Final = "scheduler.amazonaws.com"
SCHEDULE: Final = "aws:scheduler/schedule:Schedule"
GROUP_ARN: Final = re.compile(
    r"^arn:[a-z-]+:scheduler:[a-z0-9-]+:(?P<account>\d{12}):schedule-group/(?P<group>[A-Za-z0-9._-]+)$"
)
ACCOUNT: Final = re.compile(r"^\d{12}$")


def _scheduler_statements(document: Any) -> tuple[list[Any], str | None]:
    if is_unknown(document) or not isinstance(document, str):
        return [], "its trust policy is not a known JSON string: cannot be judged"
    try:
        statements, error, _ = parse_statements(json.loads(document))
    except json.JSONDecodeError:
        return [], "its trust policy is not valid JSON"
    if error:
        return [], f"its trust policy {error}"
    found = [
        st
        for st in statements
        if st.is_allow
        and SCHEDULER in principals(st.principal).get("Service", [])
        and st.covers_action("sts:AssumeRole")
    ]
    return found, None


def trust_problems(statement: Any) -> tuple[list[str], list[str]]:
    """(problems, schedule-group ARNs) of one statement admitting Scheduler."""
    problems: list[str] = []
    accounts = condition_values(statement.condition, "aws:SourceAccount")
    if not accounts:
        problems.append("has no aws:SourceAccount condition")
    elif not all(ACCOUNT.match(a) for a in accounts):
        problems.append(f"has aws:SourceAccount {accounts} that is not one concrete account id")
    arns = condition_values(statement.condition, "aws:SourceArn")
    groups: list[str] = []
    if not arns:
        problems.append("has no aws:SourceArn condition naming the schedule group")
    for arn in arns:
        if GROUP_ARN.match(arn):
            groups.append(arn)
        elif ":schedule/" in arn:
            kind = "a schedule-name prefix" if "*" in arn or "?" in arn else "one schedule's ARN"
            problems.append(
                f"scopes aws:SourceArn to {kind} ({arn}); Scheduler sends the schedule GROUP "
                "ARN, so this never matches and the schedule never runs"
            )
        else:
            problems.append(
                f"has aws:SourceArn {arn!r}, not a concrete schedule-group ARN "
                "(arn:aws:scheduler:<region>:<account>:schedule-group/<group>)"
            )
    return problems, groups


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    schedules_by_role: dict[str, list[tuple[str, str]]] = {}
    for node in stack.of_type(SCHEDULE):
        used = role_name_of(get_path(node.props, "target", "roleArn"))
        if used:
            group = as_str(node.props.get("groupName")) or "default"
            name = as_str(node.props.get("name")) or node.name
            schedules_by_role.setdefault(used, []).append((name, group))
    for role_name, role in stack.roles_by_name.items():
        statements, error = _scheduler_statements(role.props.get("assumeRolePolicy"))
        if error:
            if role_name in schedules_by_role:
                report(f"schedule role {role_name}: {error}", role.urn)
            continue
        groups: list[str] = []
        for st in statements:
            problems, found = trust_problems(st)
            groups += found
            for problem in problems:
                report(
                    f"role {role_name} trusts {SCHEDULER} ({st.label}) but {problem} "
                    "(Scheduler user guide, Confused deputy prevention)",
                    role.urn,
                )
        if not statements:
            continue
        for schedule, group in schedules_by_role.get(role_name, []):
            wanted = f"arn:*:scheduler:*:*:schedule-group/{group}"
            if groups and not any(arn_covers(wanted, arn) for arn in groups):
                report(
                    f"schedule {schedule} in group {group} uses role {role_name}, whose trust "
                    f"admits Scheduler only for {', '.join(groups)}: Scheduler cannot assume it",
                    role.urn,
                )


POLICY: Final = stack_policy(
    NAME,
    "Roles trusted by EventBridge Scheduler carry aws:SourceAccount and aws:SourceArn = the "
    "schedule-group ARN of the schedules using them.",
    _validate,
    remediation=(
        "Trust scheduler.amazonaws.com with StringEquals aws:SourceAccount and ArnEquals "
        "aws:SourceArn arn:aws:scheduler:<region>:<account>:schedule-group/<group> "
        "(components.scheduled_job.scheduler_trust_policy)."
    ),
)
