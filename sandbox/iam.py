"""Identity-policy evaluation: may this function's role make this AWS call?

Each AWS call a handler makes is turned into the IAM requirements AWS would check (action and
resource ARN, plus a few condition keys), and each requirement is evaluated against the
statements of the function's own role policy, read from the program's graph: an explicit Deny
wins, then any Allow whose Action, Resource and Condition match, else the call is denied, as in
AWS. Wildcards ``*`` and ``?`` match as IAM matches them (actions case-insensitively, ARNs
case-sensitively).

What is not modelled: resource-based policies (bucket, queue, key policies), permission
boundaries, SCPs, session policies, and condition keys this module does not supply (such a
condition is treated as satisfied and reported in ``Decision.unevaluated``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from components.offline.engine import ACCOUNT_ID


@dataclass(frozen=True)
class Requirement:
    """One permission a call needs: an action on a resource (None: the resource is unknown)."""

    action: str
    resource: str | None
    context: Mapping[str, Any] = field(default_factory=dict)


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


def _resource_matches(statement: Mapping[str, Any], resource: str | None) -> bool:
    if resource is None:
        # The resource of this call cannot be named: any statement allowing the action counts.
        return True
    if "NotResource" in statement:
        return not any(wildcard_match(p, resource) for p in _as_list(statement["NotResource"]))
    return any(wildcard_match(p, resource) for p in _as_list(statement.get("Resource")))


def _compare(operator: str, wanted: list[str], actual: str) -> bool:
    op = operator
    if op in ("StringEquals", "ArnEquals"):
        return actual in wanted
    if op == "StringEqualsIgnoreCase":
        return actual.lower() in {w.lower() for w in wanted}
    if op in ("StringLike", "ArnLike"):
        return any(wildcard_match(w, actual) for w in wanted)
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


def _conditions(
    statement: Mapping[str, Any], context: Mapping[str, Any]
) -> tuple[bool, tuple[str, ...]]:
    """Whether the statement's Condition block holds, and the keys it could not evaluate."""
    unevaluated: list[str] = []
    lowered = {k.lower(): v for k, v in context.items()}
    for raw_operator, entries in (statement.get("Condition") or {}).items():
        qualifier, _, operator = raw_operator.rpartition(":")
        if_exists = operator.endswith("IfExists")
        operator = operator.removesuffix("IfExists")
        for key, wanted_raw in entries.items():
            wanted = _as_list(wanted_raw)
            if key.lower() not in lowered:
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
                unevaluated.append(f"{raw_operator}:{key}")
                continue
            if negated:
                results = [not r for r in results]
            holds = all(results) if qualifier == "ForAllValues" else any(results)
            if not holds:
                return False, tuple(unevaluated)
    return True, tuple(unevaluated)


def evaluate(statements: Sequence[Mapping[str, Any]], requirement: Requirement) -> Decision:
    """Evaluate one requirement against a role's identity-policy statements."""
    allow: Decision | None = None
    for statement in statements:
        if not _action_matches(statement, requirement.action):
            continue
        if not _resource_matches(statement, requirement.resource):
            continue
        holds, unevaluated = _conditions(statement, requirement.context)
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
        f"User: arn:aws:sts::{ACCOUNT_ID}:assumed-role/{role}/{session} is not authorized to "
        f"perform: {req.action} on resource: {req.resource or '*'} {why}"
    )
