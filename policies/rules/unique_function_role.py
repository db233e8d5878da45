"""unique-function-role: every function has its own role, trusted by Lambda only.

What: no two Lambda functions share an execution role; the role is declared in the stack
(matched by the role name in the function's role ARN); no managed policy is attached to it
(``managedPolicyArns``, ``RolePolicyAttachment``, ``PolicyAttachment``,
``RolePolicyAttachmentsExclusive``); and its trust policy lets ``lambda.amazonaws.com``, and
nothing else, assume it (``sts:AssumeRole``, optionally ``sts:TagSession``).

Why: "each with its own execution role. No shared role" (documents 000, 002, 003, 004). A
shared role is the union of two functions' permissions, a managed policy brings permissions
nobody reviewed in the grants, and a wider trust lets something else wear the function's role.

Fix: use ``ScopedLambda``: it creates one role per function, trusted by Lambda, with one inline
policy built from grants (the log permissions included).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.documents import as_list, parse_statements, principals, role_name_of
from policies.common.graph import Stack
from policies.common.props import as_str, is_unknown
from policies.common.rule import stack_policy

NAME: Final = "unique-function-role"
LAMBDA_SERVICE: Final = "lambda.amazonaws.com"
TRUST_ACTIONS: Final = frozenset({"sts:assumerole", "sts:tagsession"})
_ATTACHMENTS: Final = (
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "aws:iam/policyAttachment:PolicyAttachment",
    "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive",
)


def trust_problems(document: Any) -> list[str]:
    """Why a trust policy admits more than Lambda (empty when it admits Lambda only)."""
    if is_unknown(document) or not isinstance(document, str):
        return ["the trust policy is not a known JSON string: cannot be judged"]
    try:
        decoded = json.loads(document)
    except json.JSONDecodeError:
        return ["the trust policy is not valid JSON"]
    statements, error, _ = parse_statements(decoded)
    if error:
        return [f"the trust policy {error}"]
    problems: list[str] = []
    lambda_trusted = False
    for st in statements:
        if not st.is_allow:
            continue
        if st.not_principal is not None or st.not_actions is not None:
            problems.append(f"trust {st.label} uses NotPrincipal/NotAction")
            continue
        who = principals(st.principal)
        if who != {"Service": [LAMBDA_SERVICE]}:
            problems.append(f"trust {st.label} admits {json.dumps(st.principal)}")
            continue
        extra = [a for a in st.all_actions if a.lower() not in TRUST_ACTIONS]
        if extra:
            problems.append(f"trust {st.label} allows {', '.join(extra)}")
            continue
        lambda_trusted = True
    if not lambda_trusted and not problems:
        problems.append("the trust policy does not let lambda.amazonaws.com assume the role")
    return problems


def _attached_roles(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    if resource_type == "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
        name = role_name_of(props.get("role"))
        return [name] if name else []
    if resource_type == "aws:iam/policyAttachment:PolicyAttachment":
        return [n for n in (role_name_of(r) for r in as_list(props.get("roles"))) if n]
    if as_list(props.get("policyArns")):
        name = role_name_of(props.get("roleName"))
        return [name] if name else []
    return []


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    owners: dict[str, list[str]] = {}
    for fn in stack.functions:
        if fn.role_arn is None:
            report(
                f"function {fn.label}: its role is not a known role ARN: cannot be judged",
                fn.node.urn,
            )
            continue
        role_name = fn.role_name
        if role_name is None or role_name not in stack.roles_by_name:
            report(
                f"function {fn.label}: role {fn.role_arn} is not declared in this stack, so its "
                "trust and policies cannot be checked",
                fn.node.urn,
            )
            continue
        owners.setdefault(role_name, []).append(fn.label)
    for role_name, functions in owners.items():
        role = stack.roles_by_name[role_name]
        if len(functions) > 1:
            report(
                f"role {role_name} is shared by functions {', '.join(sorted(functions))}", role.urn
            )
        managed = [
            a for a in as_list(role.props.get("managedPolicyArns")) if as_str(a) or is_unknown(a)
        ]
        if managed:
            report(
                f"role {role_name} of {', '.join(functions)} has managed policies "
                f"{', '.join(str(a) for a in managed)}; use grants in its inline policy",
                role.urn,
            )
        for problem in trust_problems(role.props.get("assumeRolePolicy")):
            report(f"role {role_name} of {', '.join(functions)}: {problem}", role.urn)
    for node in stack.of_type(*_ATTACHMENTS):
        for role_name in _attached_roles(node.resource_type, node.props):
            if role_name in owners:
                report(
                    f"{node.resource_type.rsplit(':', 1)[-1]} {node.name} attaches a managed "
                    f"policy to role {role_name} of function {', '.join(owners[role_name])}",
                    node.urn,
                )


POLICY: Final = stack_policy(
    NAME,
    "Each Lambda function has its own execution role, trusted by Lambda only, with no managed policy.",
    _validate,
    remediation=(
        "Give every function its own role (ScopedLambda does), trust lambda.amazonaws.com only, "
        "and express permissions as grants in the role's inline policy."
    ),
)
