"""IAM policy documents found in resources, parsed into normalised statements.

Identity policies (role, user and group policies, managed policies, a role's inline policies)
and resource policies (bucket, queue, topic, secret, event bus... policies) are read from the
engine's properties. A document that is not a known JSON string cannot be judged at preview,
and the project guarantees known documents, so the IAM rules report it instead of skipping it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from policies.common.iamdata import action_matches
from policies.common.props import get_path, is_unknown, props_of

Kind = Literal["identity", "resource"]


@dataclass(frozen=True)
class DocumentProp:
    """Where a resource type keeps a policy document.

    Attributes:
        prop: The engine's (camelCase) property name.
        kind: ``identity`` (no Principal) or ``resource`` (with Principal).
        required: The provider requires the document; absent/None is then a problem.
        star_is_self: ``Resource: "*"`` means the resource the policy is attached to (a
            Secrets Manager resource policy), not every resource.
    """

    prop: str
    kind: Kind
    required: bool = True
    star_is_self: bool = False


DOCUMENT_PROPS: Final[Mapping[str, tuple[DocumentProp, ...]]] = {
    "aws:iam/rolePolicy:RolePolicy": (DocumentProp("policy", "identity"),),
    "aws:iam/policy:Policy": (DocumentProp("policy", "identity"),),
    "aws:iam/userPolicy:UserPolicy": (DocumentProp("policy", "identity"),),
    "aws:iam/groupPolicy:GroupPolicy": (DocumentProp("policy", "identity"),),
    "aws:s3/bucketPolicy:BucketPolicy": (DocumentProp("policy", "resource"),),
    "aws:s3/bucket:Bucket": (DocumentProp("policy", "resource", required=False),),
    "aws:s3/bucketV2:BucketV2": (DocumentProp("policy", "resource", required=False),),
    "aws:sqs/queuePolicy:QueuePolicy": (DocumentProp("policy", "resource"),),
    "aws:sqs/queue:Queue": (DocumentProp("policy", "resource", required=False),),
    "aws:sns/topicPolicy:TopicPolicy": (DocumentProp("policy", "resource"),),
    "aws:sns/topic:Topic": (DocumentProp("policy", "resource", required=False),),
    "aws:secretsmanager/secretPolicy:SecretPolicy": (
        DocumentProp("policy", "resource", star_is_self=True),
    ),
    "aws:secretsmanager/secret:Secret": (
        DocumentProp("policy", "resource", required=False, star_is_self=True),
    ),
    "aws:cloudwatch/eventBusPolicy:EventBusPolicy": (DocumentProp("policy", "resource"),),
    "aws:cloudwatch/logResourcePolicy:LogResourcePolicy": (
        DocumentProp("policyDocument", "resource"),
    ),
    "aws:dynamodb/resourcePolicy:ResourcePolicy": (DocumentProp("policy", "resource"),),
    "aws:ses/identityPolicy:IdentityPolicy": (DocumentProp("policy", "resource"),),
    "aws:sesv2/emailIdentityPolicy:EmailIdentityPolicy": (DocumentProp("policy", "resource"),),
    "aws:ecr/repositoryPolicy:RepositoryPolicy": (DocumentProp("policy", "resource"),),
}
"""Resource types carrying IAM documents. KMS key policies are left out on purpose: their
``kms:*`` for the account root is the documented default; service-publisher-encryption reads
the one thing it needs of them (which services may use the key)."""

ROLE: Final = "aws:iam/role:Role"
SCOPING_CONDITION_KEYS: Final = frozenset(
    {
        "aws:sourceaccount",
        "aws:sourcearn",
        "aws:sourceowner",
        "aws:sourceorgid",
        "aws:principalaccount",
        "aws:principalarn",
        "aws:principalorgid",
        "aws:sourcevpc",
        "aws:sourcevpce",
    }
)
"""Condition keys that pin a broad principal to one account, source, organisation or network."""


def as_list(value: Any) -> list[Any]:
    """IAM's "string or list of strings" as a list."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        return [value]
    return list(value)


@dataclass(frozen=True)
class Statement:
    """One statement, normalised.

    Attributes:
        index: Position in the document (0-based).
        sid: The ``Sid`` if any.
        effect: ``Allow``, ``Deny`` or whatever was written (None if absent).
        actions: ``Action`` entries (None when the statement uses ``NotAction`` or neither).
        not_actions: ``NotAction`` entries, or None.
        resources: ``Resource`` entries, or None.
        not_resources: ``NotResource`` entries, or None.
        principal: The raw ``Principal`` (None if absent).
        not_principal: The raw ``NotPrincipal`` (None if absent).
        condition: The ``Condition`` block (empty if absent).
        problems: Shape problems (non-string entries and the like).
    """

    index: int
    sid: str | None
    effect: str | None
    actions: tuple[str, ...] | None
    not_actions: tuple[str, ...] | None
    resources: tuple[str, ...] | None
    not_resources: tuple[str, ...] | None
    principal: Any
    not_principal: Any
    condition: Mapping[str, Any]
    problems: tuple[str, ...] = ()

    @property
    def is_allow(self) -> bool:
        """Anything but an explicit Deny is judged as an Allow (the safe reading)."""
        return self.effect != "Deny"

    @property
    def label(self) -> str:
        return f"statement {self.sid!r}" if self.sid else f"statement #{self.index + 1}"

    @property
    def all_actions(self) -> tuple[str, ...]:
        return self.actions or ()

    @property
    def all_resources(self) -> tuple[str, ...]:
        return self.resources or ()

    def covers_action(self, action: str) -> bool:
        """Whether an Action entry (possibly a wildcard) matches ``action``."""
        return any(action_matches(pattern, action) for pattern in self.all_actions)


@dataclass(frozen=True)
class Document:
    """An IAM document of one resource.

    Attributes:
        urn: The resource's URN (violations are reported on it).
        resource_type: The resource's type token.
        label: ``RolePolicy dev-dm-merge-grants``: what a reader looks for.
        where: The property holding it (``policy``, ``inlinePolicies[0].policy``).
        kind: ``identity`` or ``resource``.
        star_is_self: ``Resource: "*"`` names the attached resource itself.
        statements: Parsed statements (empty when ``error`` is set).
        error: Why the document cannot be judged, or None.
        version: The ``Version`` element, if any.
        role_name: The role it is attached to (role policies and inline policies).
    """

    urn: str
    resource_type: str
    label: str
    where: str
    kind: Kind
    star_is_self: bool
    statements: tuple[Statement, ...]
    error: str | None
    version: Any = None
    role_name: str | None = None
    props: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def allow_statements(self) -> tuple[Statement, ...]:
        return tuple(s for s in self.statements if s.is_allow)

    def describe(self, statement: Statement | None = None) -> str:
        where = "" if self.where == "policy" else f" ({self.where})"
        head = f"{self.label}{where}"
        return f"{head}, {statement.label}" if statement else head


def _strings(value: Any, element: str, problems: list[str]) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = as_list(value)
    out: list[str] = []
    for item in items:
        if isinstance(item, str) and not is_unknown(item):
            out.append(item)
        else:
            problems.append(f"{element} entry {item!r} is not a known string")
    return tuple(out)


def parse_statements(document: Any) -> tuple[tuple[Statement, ...], str | None, Any]:
    """Statements of a decoded document, the reason it cannot be read, and its Version."""
    if not isinstance(document, Mapping):
        return (), "is not a JSON object", None
    raw = document.get("Statement")
    if raw is None:
        return (), "has no Statement", document.get("Version")
    raw_list = [raw] if isinstance(raw, Mapping) else raw
    if not isinstance(raw_list, list):
        return (), "has a Statement that is neither an object nor a list", document.get("Version")
    statements: list[Statement] = []
    for index, entry in enumerate(raw_list):
        problems: list[str] = []
        if not isinstance(entry, Mapping):
            statements.append(
                Statement(
                    index, None, None, None, None, None, None, None, None, {}, ("is not an object",)
                )
            )
            continue
        condition = entry.get("Condition")
        if condition is not None and not isinstance(condition, Mapping):
            problems.append("Condition is not an object")
        sid = entry.get("Sid")
        effect = entry.get("Effect")
        statements.append(
            Statement(
                index=index,
                sid=sid if isinstance(sid, str) else None,
                effect=effect if isinstance(effect, str) else None,
                actions=_strings(entry.get("Action"), "Action", problems),
                not_actions=_strings(entry.get("NotAction"), "NotAction", problems),
                resources=_strings(entry.get("Resource"), "Resource", problems),
                not_resources=_strings(entry.get("NotResource"), "NotResource", problems),
                principal=entry.get("Principal"),
                not_principal=entry.get("NotPrincipal"),
                condition=dict(condition) if isinstance(condition, Mapping) else {},
                problems=tuple(problems),
            )
        )
    return tuple(statements), None, document.get("Version")


def _short_type(resource_type: str) -> str:
    return resource_type.rsplit(":", 1)[-1]


def _physical_name(props: Mapping[str, Any], fallback: str) -> str:
    for key in ("name", "bucket", "queueUrl", "arn", "secretArn", "role"):
        value = props.get(key)
        if isinstance(value, str) and not is_unknown(value):
            return value
    return fallback


def role_name_of(value: Any) -> str | None:
    """A role name from a role name or role ARN (``arn:aws:iam::1:role/path/name`` -> name)."""
    if not isinstance(value, str) or is_unknown(value) or not value:
        return None
    if value.startswith("arn:"):
        _, _, rest = value.partition(":role/")
        return rest.rsplit("/", 1)[-1] or None
    return value


def _document(
    *,
    urn: str,
    resource_type: str,
    label: str,
    where: str,
    spec: DocumentProp,
    value: Any,
    role_name: str | None,
    props: Mapping[str, Any],
) -> Document | None:
    common: dict[str, Any] = {
        "urn": urn,
        "resource_type": resource_type,
        "label": label,
        "where": where,
        "kind": spec.kind,
        "star_is_self": spec.star_is_self,
        "role_name": role_name,
        "props": props,
    }
    if value is None:
        if not spec.required:
            return None
        return Document(statements=(), error="has no policy document", **common)
    if is_unknown(value):
        return Document(statements=(), error="is unknown at preview: cannot be judged", **common)
    if not isinstance(value, str):
        return Document(
            statements=(),
            error="is not a JSON string (unknown at preview or an object): cannot be judged",
            **common,
        )
    try:
        decoded = json.loads(value)
    except json.JSONDecodeError as err:
        return Document(statements=(), error=f"is not valid JSON ({err.msg})", **common)
    statements, error, version = parse_statements(decoded)
    return Document(statements=statements, error=error, version=version, **common)


def documents_of(
    resource_type: str, props: Mapping[str, Any], urn: str, name: str
) -> list[Document]:
    """Every IAM document a resource carries (none for types without documents)."""
    label = f"{_short_type(resource_type)} {_physical_name(props, name)}"
    found: list[Document] = []
    role_name = (
        role_name_of(props.get("role"))
        if resource_type == "aws:iam/rolePolicy:RolePolicy"
        else None
    )
    for spec in DOCUMENT_PROPS.get(resource_type, ()):
        doc = _document(
            urn=urn,
            resource_type=resource_type,
            label=label,
            where=spec.prop,
            spec=spec,
            value=props.get(spec.prop),
            role_name=role_name,
            props=props,
        )
        if doc is not None:
            found.append(doc)
    if resource_type == ROLE:
        inline = props.get("inlinePolicies")
        spec = DocumentProp("policy", "identity", required=False)
        for index, entry in enumerate(as_list(inline)):
            value = get_path(entry, "policy") if isinstance(entry, Mapping) else entry
            doc = _document(
                urn=urn,
                resource_type=resource_type,
                label=label,
                where=f"inlinePolicies[{index}].policy",
                spec=spec,
                value=value,
                role_name=role_name_of(props.get("name")),
                props=props,
            )
            if doc is not None:
                found.append(doc)
    return found


def documents_in(resources: Iterable[Any]) -> list[Document]:
    """Every IAM document in a list of PolicyResources."""
    found: list[Document] = []
    for resource in resources:
        if resource.resource_type in DOCUMENT_PROPS or resource.resource_type == ROLE:
            found.extend(
                documents_of(
                    resource.resource_type, props_of(resource), resource.urn, resource.name
                )
            )
    return found


# Statement predicates ----------------------------------------------------------------------


def principals(value: Any) -> dict[str, list[str]]:
    """A Principal element as ``{"AWS": [...], "Service": [...]}``; ``"*"`` is ``{"AWS": ["*"]}``."""
    if value is None:
        return {}
    if isinstance(value, str):
        return {"AWS": [value]}
    if isinstance(value, Mapping):
        return {str(k): [str(v) for v in as_list(item)] for k, item in value.items()}
    return {"?": [repr(value)]}


def is_everyone(value: Any) -> bool:
    """Whether a Principal admits anyone (``*`` or ``{"AWS": "*"}``)."""
    return any("*" in names for names in principals(value).values())


def scoping_keys(condition: Mapping[str, Any]) -> set[str]:
    """Scoping condition keys (lower case) used with a positive operator."""
    found: set[str] = set()
    for operator, block in condition.items():
        op = str(operator)
        if "Not" in op or op.endswith("IfExists") or op == "Null" or not isinstance(block, Mapping):
            continue
        for key in block:
            if str(key).lower() in SCOPING_CONDITION_KEYS:
                found.add(str(key).lower())
    return found


def is_tls_deny(statement: Statement, service: str) -> bool:
    """A ``Deny`` of every ``service`` action to everyone when ``aws:SecureTransport`` is false."""
    if statement.effect != "Deny" or not is_everyone(statement.principal):
        return False
    if not any(a == "*" or a.lower() == f"{service}:*" for a in statement.all_actions):
        return False
    for operator, block in statement.condition.items():
        if str(operator) not in ("Bool", "BoolIfExists") or not isinstance(block, Mapping):
            continue
        for key, value in block.items():
            if str(key).lower() != "aws:securetransport":
                continue
            if any(str(v).lower() == "false" for v in as_list(value)):
                return True
    return False
