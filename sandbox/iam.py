"""Policy evaluation: may this principal make this request? One evaluator for every document.

A requirement (action, resource ARN, the calling principal, the request context) is evaluated
against the statements of one policy document, as AWS evaluates it ("Policy evaluation logic",
IAM User Guide, https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html):
an explicit Deny wins, then any Allow whose Principal, Action, Resource and Condition match,
else the request is implicitly denied. Wildcards ``*`` and ``?`` match as IAM matches them
(actions case-insensitively, ARNs case-sensitively).

Two uses:

- identity policies (a handler's own calls, checked against its role policy): statements have
  no Principal, and ``strict=False`` treats a condition key the sandbox does not supply as
  satisfied (reported in ``Decision.unevaluated``), since ``sandbox.actions`` supplies only a
  few keys;
- trust, resource and key policies (one service acting on another: a role's trust policy, a
  function's ``lambda:Permission`` statements, bucket, queue, topic and key policies): the
  requirement names the principal (``scheduler.amazonaws.com``), the request context is the
  whole context that service sends (``sandbox.service_requests``), and ``strict=True`` applies
  IAM's rule for absent keys: a condition on a key that is not in the request is false, except
  for ``...IfExists``, ``Null`` and the negated operators ("IAM JSON policy elements: Condition
  operators", https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html).

What is not modelled: permission boundaries, SCPs, session policies, KMS grants, and
cross-account evaluation (everything here lives in one account).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sandbox.account import arns


@dataclass(frozen=True)
class Requirement:
    """One permission a call needs: an action on a resource (None: the resource is unknown)."""

    action: str
    resource: str | None
    context: Mapping[str, Any] = field(default_factory=dict)
    principal: str | None = None
    """Who asks, for resource-based and trust policies: a service principal
    (``s3.amazonaws.com``) or an IAM ARN. None for identity policies (no Principal element)."""


@dataclass(frozen=True)
class Decision:
    """The outcome for one requirement."""

    allowed: bool
    requirement: Requirement
    statement: str | None = None
    explicit_deny: bool = False
    unevaluated: tuple[str, ...] = ()


@lru_cache(maxsize=4096)
def _pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    regex = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    flags = (re.IGNORECASE | re.DOTALL) if ignore_case else re.DOTALL
    return re.compile(f"^{regex}$", flags)


def wildcard_match(pattern: str, value: str, *, ignore_case: bool = False) -> bool:
    """IAM's wildcard match: ``*`` any run of characters, ``?`` any one character."""
    return bool(_pattern(pattern, ignore_case).match(value))


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _action_matches(statement: Mapping[str, Any], action: str) -> bool:
    if "NotAction" in statement:
        return not any(
            wildcard_match(p, action, ignore_case=True) for p in _as_list(statement["NotAction"])
        )
    return any(
        wildcard_match(p, action, ignore_case=True) for p in _as_list(statement.get("Action"))
    )


def _account_of(arn: str) -> str | None:
    parts = arn.split(":")
    return parts[4] if len(parts) > 5 and parts[0] == "arn" and parts[4] else None


def _one_principal(kind: str, pattern: str, principal: str) -> bool:
    """One entry of a Principal element against the caller ("AWS JSON policy elements:
    Principal"): ``Service`` names a service principal; ``AWS`` an account (its ID or its
    ``:root`` ARN, meaning any IAM principal of that account) or an exact IAM ARN; ``*`` anyone."""
    if pattern == "*":
        return True
    is_service = principal.endswith(".amazonaws.com")
    if kind == "Service":
        return is_service and pattern.lower() == principal.lower()
    if kind == "AWS" and not is_service:
        account = pattern.split(":")[4] if pattern.endswith(":root") else pattern
        if account.isdigit():
            return _account_of(principal) == account
        return pattern == principal
    return False


def _principal_matches(statement: Mapping[str, Any], principal: str | None) -> bool:
    if principal is None:
        # An identity policy: its statements apply to the identity they are attached to.
        return "Principal" not in statement and "NotPrincipal" not in statement
    key = "NotPrincipal" if "NotPrincipal" in statement else "Principal"
    element = statement.get(key)
    if element is None:
        return False  # a resource policy statement without a principal admits no one
    if isinstance(element, str):
        element = {"AWS": element}  # "Principal": "*" or one ARN
    if element == {"AWS": "*"}:
        found = True
    else:
        found = any(
            _one_principal(kind, pattern, principal)
            for kind, patterns in dict(element).items()
            for pattern in _as_list(patterns)
        )
    return not found if key == "NotPrincipal" else found


def _resource_matches(statement: Mapping[str, Any], resource: str | None) -> bool:
    if resource is None:
        # The resource of this call cannot be named: any statement allowing the action counts.
        return True
    if "NotResource" in statement:
        return not any(wildcard_match(p, resource) for p in _as_list(statement["NotResource"]))
    if "Resource" not in statement:
        return True  # a role trust policy: its statements are about the role they belong to
    return any(wildcard_match(p, resource) for p in _as_list(statement.get("Resource")))


def arn_match(pattern: str, arn: str) -> bool:
    """``ArnEquals`` / ``ArnLike`` (they behave alike): each of the six colon-separated parts
    is matched on its own, with ``*`` and ``?`` wildcards ("IAM JSON policy elements: Condition
    operators", Amazon Resource Name (ARN) condition operators)."""
    wanted, actual = pattern.split(":", 5), arn.split(":", 5)
    if len(wanted) != 6 or len(actual) != 6:
        return wildcard_match(pattern, arn)
    return all(wildcard_match(w, a) for w, a in zip(wanted, actual, strict=True))


def _compare(operator: str, wanted: list[str], actual: str) -> bool:
    op = operator
    if op == "StringEquals":
        return actual in wanted
    if op == "StringEqualsIgnoreCase":
        return actual.lower() in {w.lower() for w in wanted}
    if op == "StringLike":
        return any(wildcard_match(w, actual) for w in wanted)
    if op in ("ArnEquals", "ArnLike"):
        return any(arn_match(w, actual) for w in wanted)
    if op == "Bool":
        return actual.lower() in {w.lower() for w in wanted}
    if op.startswith("Numeric"):
        number = float(actual)
        checks = {
            "NumericEquals": lambda w: number == w,
            "NumericLessThan": lambda w: number < w,
            "NumericLessThanEquals": lambda w: number <= w,
            "NumericGreaterThan": lambda w: number > w,
            "NumericGreaterThanEquals": lambda w: number >= w,
        }
        return any(checks[op](float(w)) for w in wanted)
    raise KeyError(op)


_NEGATED = {
    "StringNotEquals": "StringEquals",
    "StringNotEqualsIgnoreCase": "StringEqualsIgnoreCase",
    "StringNotLike": "StringLike",
    "ArnNotEquals": "ArnEquals",
    "ArnNotLike": "ArnLike",
    "NumericNotEquals": "NumericEquals",
}


def _absent_key_holds(qualifier: str, operator: str, if_exists: bool, wanted: list[str]) -> bool:
    """IAM's rule for a condition whose key is not in the request context: false, except
    ``...IfExists`` (true), ``Null`` (true when it asks for absence), a negated operator such
    as ``StringNotEquals`` (true), and ``ForAllValues`` over an empty set (true)."""
    if operator == "Null":
        return "true" in [w.lower() for w in wanted]
    return if_exists or operator in _NEGATED or qualifier == "ForAllValues"


def _conditions(
    statement: Mapping[str, Any], context: Mapping[str, Any], strict: bool = False
) -> tuple[bool, tuple[str, ...]]:
    """Whether the statement's Condition block holds, and the keys it could not evaluate.

    Condition keys are case-insensitive (``AWS:SourceArn`` is ``aws:SourceArn``)."""
    unevaluated: list[str] = []
    lowered = {k.lower(): v for k, v in context.items()}
    for raw_operator, entries in (statement.get("Condition") or {}).items():
        qualifier, _, operator = raw_operator.rpartition(":")
        if_exists = operator.endswith("IfExists")
        operator = operator.removesuffix("IfExists")
        for key, wanted_raw in entries.items():
            wanted = _as_list(wanted_raw)
            if key.lower() not in lowered:
                if strict:
                    if not _absent_key_holds(qualifier, operator, if_exists, wanted):
                        return False, tuple(unevaluated)
                    continue
                if operator == "Null":
                    if "true" not in [w.lower() for w in wanted]:
                        unevaluated.append(key)
                    continue
                if not if_exists:
                    unevaluated.append(key)
                continue
            value = lowered[key.lower()]
            values = [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]
            if operator == "Null":
                if "true" in [w.lower() for w in wanted]:
                    return False, tuple(unevaluated)
                continue
            negated = operator in _NEGATED
            base = _NEGATED.get(operator, operator)
            try:
                results = [_compare(base, wanted, v) for v in values]
            except KeyError:
                if strict:
                    raise ValueError(f"condition operator {raw_operator} is not modelled") from None
                unevaluated.append(f"{raw_operator}:{key}")
                continue
            if negated:
                results = [not r for r in results]
            holds = all(results) if qualifier == "ForAllValues" else any(results)
            if not holds:
                return False, tuple(unevaluated)
    return True, tuple(unevaluated)


def evaluate(
    statements: Sequence[Mapping[str, Any]], requirement: Requirement, *, strict: bool = False
) -> Decision:
    """Evaluate one requirement against the statements of one policy document.

    With ``requirement.principal`` set, only statements whose Principal admits it apply (a
    resource-based or trust policy); without, only statements with no Principal (an identity
    policy). ``strict`` applies IAM's absent-key rule (see the module docstring)."""
    allow: Decision | None = None
    for statement in statements:
        if not _principal_matches(statement, requirement.principal):
            continue
        if not _action_matches(statement, requirement.action):
            continue
        if not _resource_matches(statement, requirement.resource):
            continue
        holds, unevaluated = _conditions(statement, requirement.context, strict)
        if not holds:
            continue
        sid = statement.get("Sid")
        if statement.get("Effect") == "Deny":
            return Decision(False, requirement, sid, explicit_deny=True, unevaluated=unevaluated)
        if allow is None:
            allow = Decision(True, requirement, sid, unevaluated=unevaluated)
    return allow or Decision(False, requirement)


def denial_message(role: str, session: str, decision: Decision) -> str:
    """The message AWS gives for an identity-policy denial."""
    req = decision.requirement
    why = (
        "with an explicit deny in an identity-based policy"
        if decision.explicit_deny
        else f"because no identity-based policy allows the {req.action} action"
    )
    return (
        f"User: {arns('').assumed_role(role, session)} is not authorized to "
        f"perform: {req.action} on resource: {req.resource or '*'} {why}"
    )
