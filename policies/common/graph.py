"""The stack as the rules see it: functions, roles and the names that link resources.

Resources link to each other by plain strings known at preview (role ARNs in functions, role
names in role policies, queue URLs in queue policies, bucket names in bucket policies), so the
rules join on those strings rather than on URNs or engine outputs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from policies.common.documents import role_name_of
from policies.common.props import as_str, props_of, string_map

FUNCTION: Final = "aws:lambda/function:Function"
ROLE: Final = "aws:iam/role:Role"
PREFIX: Final = re.compile(r"^[a-z][a-z0-9]{1,9}$")
SYSTEM_TAG: Final = "crm:system"
FUNCTION_TAG: Final = "crm:function"


@dataclass(frozen=True)
class Node:
    """One resource with plain properties."""

    resource_type: str
    name: str
    urn: str
    props: Mapping[str, Any]


@dataclass(frozen=True)
class FunctionInfo:
    """A Lambda function and the identity the project's conventions give it.

    Attributes:
        node: The resource.
        physical_name: Its ``name`` (``dev-dm-merge``), or None when not a known string.
        seed: The ``crm:function`` tag (``dm-merge``) when consistent with the name.
        system: The ``crm:system`` tag (``dm``).
        prefix: The stack prefix in front of the seed name.
        role_arn: The execution role ARN, None when not a known string.
        problems: Why the function's identity cannot be trusted (empty when it can).
    """

    node: Node
    physical_name: str | None
    seed: str | None
    system: str | None
    prefix: str | None
    role_arn: str | None
    problems: tuple[str, ...]

    @property
    def role_name(self) -> str | None:
        return role_name_of(self.role_arn)

    @property
    def label(self) -> str:
        return self.physical_name or self.node.name


def _tags(props: Mapping[str, Any]) -> dict[str, Any]:
    tags = string_map(props.get("tagsAll"))
    tags.update(string_map(props.get("tags")))
    return tags


def function_info(node: Node) -> FunctionInfo:
    """Identify a function by its tags, checked against its physical name."""
    props = node.props
    name = as_str(props.get("name"))
    tags = _tags(props)
    seed = as_str(tags.get(FUNCTION_TAG))
    system = as_str(tags.get(SYSTEM_TAG))
    problems: list[str] = []
    prefix: str | None = None
    if name is None:
        problems.append("has no explicit physical name (a known string)")
    if seed is None:
        problems.append(f"has no {FUNCTION_TAG} tag")
    if system is None:
        problems.append(f"has no {SYSTEM_TAG} tag")
    if name is not None and seed is not None:
        head, sep, tail = name.partition("-")
        if not sep or tail != seed or not PREFIX.match(head):
            problems.append(
                f"is named {name!r}, not <prefix>-{seed} as its {FUNCTION_TAG} tag says"
            )
        else:
            prefix = head
    if seed is not None and system is not None and not seed.startswith(f"{system}-"):
        problems.append(f"has {FUNCTION_TAG}={seed!r} outside its {SYSTEM_TAG}={system!r}")
    return FunctionInfo(
        node=node,
        physical_name=name,
        seed=seed if not problems else None,
        system=system,
        prefix=prefix,
        role_arn=as_str(props.get("role")),
        problems=tuple(problems),
    )


def lambda_name(value: Any) -> str | None:
    """A function name from a name, a partial ARN or a full (qualified) ARN."""
    text = as_str(value)
    if not text:
        return None
    if text.startswith("arn:"):
        parts = text.split(":")
        # arn:aws:lambda:region:account:function:name[:qualifier]
        return parts[6] if len(parts) >= 7 and parts[5] == "function" else None
    if ":" in text:
        # account:function:name, or name:qualifier
        parts = text.split(":")
        return parts[2] if len(parts) >= 3 and parts[1] == "function" else parts[0]
    return text


class Stack:
    """Indexes over a stack's resources, built once per rule run."""

    def __init__(self, resources: Iterable[Any]) -> None:
        self.nodes: list[Node] = [
            Node(r.resource_type, r.name, r.urn, props_of(r)) for r in resources
        ]
        self._by_type: dict[str, list[Node]] = {}
        for node in self.nodes:
            self._by_type.setdefault(node.resource_type, []).append(node)
        self.functions: list[FunctionInfo] = [function_info(n) for n in self.of_type(FUNCTION)]
        self.functions_by_name: dict[str, FunctionInfo] = {
            f.physical_name: f for f in self.functions if f.physical_name
        }
        self.roles_by_name: dict[str, Node] = {}
        for role in self.of_type(ROLE):
            role_name = as_str(role.props.get("name"))
            if role_name:
                self.roles_by_name[role_name] = role

    def of_type(self, *types: str) -> Sequence[Node]:
        if len(types) == 1:
            return self._by_type.get(types[0], [])
        return [n for t in types for n in self._by_type.get(t, [])]

    def function_named(self, value: Any) -> FunctionInfo | None:
        """The function a ``function`` / ``functionName`` property points at."""
        name = lambda_name(value)
        return self.functions_by_name.get(name) if name else None

    def functions_with_role(self, role_name: str) -> list[FunctionInfo]:
        return [f for f in self.functions if f.role_name == role_name]


def queue_name_of_arn(value: Any) -> str | None:
    """``arn:aws:sqs:region:account:name`` -> name."""
    text = as_str(value)
    if not text or not text.startswith("arn:"):
        return None
    parts = text.split(":")
    return parts[5] if len(parts) == 6 and parts[2] == "sqs" else None


def queue_name_of_url(value: Any) -> str | None:
    """``https://sqs.region.amazonaws.com/account/name`` -> name."""
    text = as_str(value)
    if not text:
        return None
    return text.rstrip("/").rsplit("/", 1)[-1] or None
