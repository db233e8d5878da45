"""Typed IAM grants: actions on concrete ARNs, checked when they are declared.

A grant is the only way a function gets a permission in this project. Resources hand grants out
scoped to themselves (``table.grant("dynamodb:PutItem")``), so a caller never spells an ARN by
hand, and every ARN is a plain string built from known values (account, region, explicit
physical name): the IAM documents are therefore complete at ``pulumi preview`` and the policy
pack judges them there.

The checks here are the first line of defence; ``policies/`` is the second.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_ACTION = re.compile(r"^[a-z0-9-]+:[A-Za-z0-9]+$")

NO_RESOURCE_LEVEL_ACTIONS: frozenset[str] = frozenset({"dynamodb:ListStreams"})
"""Read/list actions that accept no resource ARN at all, so IAM matches them only on ``"*"``
(Service Authorization Reference, "Actions, resources, and condition keys for Amazon DynamoDB":
``ListStreams`` names no resource type). A grant of only these may name ``"*"``; every other
grant names concrete ARNs. tests/infra/test_blocks.py checks the list against policy_sentry."""

RESOURCELESS_WRITE_ACTIONS = frozenset({"xray:PutTraceSegments", "xray:PutTelemetryRecords"})
"""Write actions with no resource type, which IAM only accepts on ``Resource: "*"``: the two
of Lambda active tracing: the Service
Authorization Reference, "Actions defined by AWS X-Ray"
(https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsx-ray.html), lists
no resource type for either (policy_sentry: ``resource_arn_format`` ``*``). A grant of only
these actions may name ``*``; nothing else ever may. The policy pack's ``no-wildcard-write``
keeps the same two in its ``resourceStarActions``."""


class GrantError(ValueError):
    """A grant that would widen a permission beyond named actions on concrete resources."""


@dataclass(frozen=True)
class Grant:
    """One IAM Allow statement: named actions on concrete resource ARNs.

    Attributes:
        sid: Statement id; it names the grant in the plan and in error messages.
        actions: Fully named actions such as ``dynamodb:PutItem``. No wildcard, ever.
        resources: Concrete ARNs. ``*`` is refused (except alone, for actions that have no
            resource type: :data:`NO_RESOURCE_LEVEL_ACTIONS` and
            :data:`RESOURCELESS_WRITE_ACTIONS`); a wildcard is accepted only inside an ARN's
            resource part (object keys under one prefix, one table's indexes, one secret's
            random suffix), which the policy pack checks again against policy_sentry's data.
        conditions: Optional IAM condition block, e.g. ``{"StringEquals": {...}}``.
    """

    sid: str
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    conditions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def problems(self) -> list[str]:
        """What makes this grant too wide or malformed; empty when it is acceptable."""
        found: list[str] = []
        if not re.fullmatch(r"[A-Za-z0-9]+", self.sid):
            found.append("the statement id must be alphanumeric")
        if not self.actions:
            found.append("no actions")
        if not self.resources:
            found.append("no resources")
        for action in self.actions:
            if "*" in action or "?" in action:
                found.append(f"wildcard action {action!r}")
            elif not _ACTION.match(action):
                found.append(f"{action!r} is not a service:Action name")
        star_ok = bool(self.actions) and set(self.actions) <= RESOURCELESS_WRITE_ACTIONS
        for arn in self.resources:
            if arn == "*" and star_ok and self.resources == ("*",):
                continue
            if not isinstance(arn, str):
                found.append(
                    f"resource {arn!r} is not a known string ARN (an Output would leave the "
                    "policy unknown at preview)"
                )
            elif arn == "*" and set(self.actions) <= NO_RESOURCE_LEVEL_ACTIONS:
                continue  # these actions cannot be scoped: "*" is the only resource IAM matches
            elif arn.strip() == "*" or not arn.startswith("arn:"):
                found.append(f"resource {arn!r} is not a concrete ARN")
        return found

    def statement(self) -> dict[str, Any]:
        """The IAM policy statement for this grant."""
        statement: dict[str, Any] = {
            "Sid": self.sid,
            "Effect": "Allow",
            "Action": sorted(self.actions),
            "Resource": sorted(self.resources),
        }
        if self.conditions:
            statement["Condition"] = {k: dict(v) for k, v in self.conditions.items()}
        return statement


def grant(sid: str, actions: Iterable[str], resources: Iterable[str], **conditions: Any) -> Grant:
    """Shorthand for :class:`Grant` with sequences instead of tuples."""
    return Grant(sid, tuple(actions), tuple(resources), conditions)


def check(grants: Sequence[Grant], *, owner: str) -> None:
    """Raise GrantError naming ``owner`` and the statement for the first bad grant."""
    seen: set[str] = set()
    for g in grants:
        problems = g.problems()
        if g.sid in seen:
            problems.append("another grant of this function has the same statement id")
        seen.add(g.sid)
        if problems:
            raise GrantError(f"{owner}: statement {g.sid!r}: " + "; ".join(problems))


def policy_document(grants: Sequence[Grant], *, owner: str) -> str:
    """The JSON IAM policy document for ``owner``'s grants, checked first."""
    check(grants, owner=owner)
    statements = [g.statement() for g in grants]
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, sort_keys=True)
