"""What a change replaces: this plan against a saved one (``make plan STACK=prod BASE=plan.json``).

Resources are matched by URN, as the engine matches them. A resource is **replaced** when its
URN stays and a property its provider cannot update in place changes, or when its region
changes (each system's resources use the explicit provider of the system's region; a resource
moved to another provider is replaced, and in AWS the new one is a different, empty resource
in the other region). It is **deleted** when its URN leaves the plan, **created** when one
comes. Stateful resources come first: tables, buckets, secrets, queues.

The replace-on-change properties are the ones pulumi-aws marks "forces new resource" (the
``replace`` lines of ``pulumi preview --diff``), for the types this program declares; AWS's
own update behaviour agrees ("Update requires: Replacement" in the CloudFormation reference:
a table's name, key schema and local indexes
https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-dynamodb-table.html,
a bucket's name and object lock
https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-s3-bucket.html,
a queue's name and FIFO flag
https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-sqs-queue.html,
a secret's name
https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-secretsmanager-secret.html,
a parameter's name
https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-ssm-parameter.html).
A type not listed is judged by its region only; ``pulumi preview --diff`` remains the
authority for the rest.

In a protected stack (environment ``prod``) a replacement or deletion of a table or bucket
loses its data (opt-out lists, undo records, raw mail), so it is refused unless the stack's
``allowReplacement`` names the resource's logical name.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

TABLE: Final = "aws:dynamodb/table:Table"
BUCKET: Final = "aws:s3/bucket:Bucket"
SECRET: Final = "aws:secretsmanager/secret:Secret"
PARAMETER: Final = "aws:ssm/parameter:Parameter"
QUEUE: Final = "aws:sqs/queue:Queue"
STATEFUL: Final = (TABLE, BUCKET, SECRET, PARAMETER, QUEUE)
"""Listed first, in this order: what a replacement empties."""
GUARDED: Final = frozenset({TABLE, BUCKET})
"""Refused in a protected stack unless ``allowReplacement`` names them."""

REPLACE_ON_CHANGE: Final[dict[str, tuple[str, ...]]] = {
    TABLE: ("name", "hashKey", "rangeKey", "localSecondaryIndexes"),
    BUCKET: ("bucket", "bucketPrefix", "objectLockEnabled"),
    SECRET: ("name", "namePrefix"),
    PARAMETER: ("name",),
    QUEUE: ("name", "namePrefix", "fifoQueue"),
    "aws:sns/topic:Topic": ("name", "namePrefix", "fifoTopic"),
    "aws:kms/key:Key": ("customerMasterKeySpec", "keyUsage", "multiRegion"),
    "aws:cloudwatch/logGroup:LogGroup": ("name", "namePrefix"),
    "aws:lambda/function:Function": ("name", "packageType"),
    "aws:lambda/functionUrl:FunctionUrl": ("functionName", "qualifier"),
    "aws:lambda/eventSourceMapping:EventSourceMapping": (
        "eventSourceArn",
        "startingPosition",
        "startingPositionTimestamp",
    ),
    "aws:lambda/permission:Permission": (
        "action",
        "functionName",
        "principal",
        "sourceArn",
        "sourceAccount",
        "statementId",
        "qualifier",
        "functionUrlAuthType",
    ),
    "aws:iam/role:Role": ("name", "namePrefix", "path"),
    "aws:iam/rolePolicy:RolePolicy": ("name", "namePrefix", "role"),
    "aws:scheduler/schedule:Schedule": ("name", "namePrefix", "groupName"),
    "aws:scheduler/scheduleGroup:ScheduleGroup": ("name", "namePrefix"),
    "aws:cloudwatch/eventRule:EventRule": ("name", "namePrefix", "eventBusName"),
    "aws:ses/receiptRule:ReceiptRule": ("name", "ruleSetName"),
    "aws:ses/receiptRuleSet:ReceiptRuleSet": ("ruleSetName",),
}
"""Per type, the input properties whose change replaces the resource (pulumi-aws ForceNew)."""

Action = Literal["replace", "delete", "create"]


@dataclass(frozen=True)
class Change:
    """One resource this change replaces, deletes or creates.

    Attributes:
        action: ``replace``, ``delete`` or ``create``.
        type: The type token.
        name: The logical name (what ``allowReplacement`` names).
        physical_name: Its AWS name, when it has one.
        reasons: For a replacement, each property that forces it: ``name a -> b``.
    """

    action: Action
    type: str
    name: str
    physical_name: str | None
    reasons: tuple[str, ...] = ()

    @property
    def guarded(self) -> bool:
        """A table or bucket replaced or deleted: its data does not follow."""
        return self.type in GUARDED and self.action in ("replace", "delete")

    def line(self) -> str:
        shown = f" ({self.physical_name})" if self.physical_name else ""
        why = f": {'; '.join(self.reasons)}" if self.reasons else ""
        return f"{self.action.upper():8} {self.type} {self.name}{shown}{why}"


def _shown(value: Any) -> str:
    return "(none)" if value is None else json.dumps(value, sort_keys=True)


def _reasons(type_token: str, base: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    found = []
    if base.get("region") and now.get("region") and base["region"] != now["region"]:
        found.append(f"region {base['region']} -> {now['region']}")
    before, after = base.get("inputs") or {}, now.get("inputs") or {}
    for prop in REPLACE_ON_CHANGE.get(type_token, ()):
        if before.get(prop) != after.get(prop):
            found.append(f"{prop} {_shown(before.get(prop))} -> {_shown(after.get(prop))}")
    return found


def _custom(resources: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {
        r["urn"]: r
        for r in resources
        if r.get("custom") and not str(r.get("type", "")).startswith("pulumi:providers:")
    }


def changes(base: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]) -> list[Change]:
    """Every replacement, deletion and creation from ``base`` to ``now`` (``--json`` plans),
    stateful types first (tables, buckets, secrets, queues), then by action and name."""
    before, after = _custom(base), _custom(now)
    found: list[Change] = []
    for urn, r in after.items():
        if urn not in before:
            found.append(Change("create", r["type"], r["name"], r.get("physical_name")))
        elif reasons := _reasons(r["type"], before[urn], r):
            found.append(
                Change("replace", r["type"], r["name"], r.get("physical_name"), tuple(reasons))
            )
    for urn, r in before.items():
        if urn not in after:
            found.append(Change("delete", r["type"], r["name"], r.get("physical_name")))
    order = {"replace": 0, "delete": 1, "create": 2}

    def key(c: Change) -> tuple[int, int, str, str]:
        rank = STATEFUL.index(c.type) if c.type in STATEFUL else len(STATEFUL)
        return rank, order[c.action], c.type, c.name

    return sorted(found, key=key)


def refused(found: Iterable[Change], *, protected: bool, allowed: Collection[str]) -> list[Change]:
    """The table and bucket replacements or deletions a protected stack refuses."""
    if not protected:
        return []
    return [c for c in found if c.guarded and c.name not in allowed]


def stack_of(plan: Sequence[Mapping[str, Any]]) -> str | None:
    """The stack a saved plan was made for (``urn:pulumi:<stack>::...``)."""
    for r in plan:
        parts = str(r.get("urn", "")).split("::", 1)[0].split(":")
        if len(parts) == 3:
            return parts[2]
    return None


def load(path: Path) -> list[dict[str, Any]]:
    """A plan written by ``make plan JSON=<file>``."""
    data = json.loads(path.read_text())
    if not isinstance(data, list) or not all(isinstance(r, dict) and "urn" in r for r in data):
        raise ValueError(f"{path} is not a plan written by `make plan JSON=...`")
    return data


def report(
    found: Sequence[Change], *, stack: str, protected: bool, allowed: Collection[str]
) -> tuple[list[str], bool]:
    """The lines ``make plan BASE=...`` prints, and whether the change may go ahead."""
    counts = {a: sum(c.action == a for c in found) for a in ("replace", "delete", "create")}
    lines = [
        f"changes against the base plan: {counts['replace']} replaced, {counts['delete']} "
        f"deleted, {counts['create']} created (stateful first)"
    ]
    lines += [f"  {c.line()}" for c in found if c.action != "create" or c.type in STATEFUL]
    others = sum(c.action == "create" and c.type not in STATEFUL for c in found)
    if others:
        lines.append(f"  (and {others} other resources created)")
    stale = sorted(set(allowed) - {c.name for c in found if c.guarded})
    if stale:
        lines.append(
            f"note: allowReplacement names {', '.join(stale)}, which this change does not "
            "replace or delete: remove them after the update"
        )
    blocked = refused(found, protected=protected, allowed=allowed)
    if blocked:
        names = ", ".join(c.name for c in blocked)
        lines.append(
            f"REFUSED: stack {stack} is protected and this change replaces or deletes "
            f"{len(blocked)} table(s)/bucket(s) ({names}); their data does not move. If that "
            f"is meant, list them in crm-automations:allowReplacement of Pulumi.{stack}.yaml "
            "for this update (export the data first), then remove them."
        )
    return lines, not blocked
