"""The pipeline roles' policies, generated from the program's own graph.

``make deploy-policy`` runs each stack on the mock engine (components/offline/program.py) and
writes ``bootstrap/generated/<stack>.json``: what the preview role may read, what the deploy
role may do, what ``make verify`` needs after a deploy, and the permissions boundary every
role the stack creates must carry. Each is built from the resource types the graph declares
(bootstrap/access.py), on ARNs under the stack's prefix in the regions where the graph puts
them, packed into managed policies within IAM's size limit. The bootstrap program
(bootstrap/program.py) reads the file; tests/bootstrap/ regenerates it and fails when it is
stale or when the graph declares a resource type no row covers.

The account is written as :data:`ACCOUNT`, which the bootstrap replaces with its own: the
file is the same for every account.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from bootstrap.access import TYPES, VERIFY, TypeAccess
from components.arns import ROLE_BOUNDARY_PATH, Arns
from components.offline.engine import ACCOUNT_ID, Graph, Resource
from components.stack import POWERTOOLS_PARAMETER
from policies.common.iamdata import arn_fits_format, lookup_action

ROOT: Final = Path(__file__).resolve().parents[1]
GENERATED: Final = Path(__file__).resolve().parent / "generated"
ACCOUNT: Final = "${Account}"
"""Stands for the account id in the generated file; bootstrap/program.py fills it in."""
PARTITION: Final = "aws"
STACKS: Final = ("dev", "prod")
MANAGED_POLICY_CHARS: Final = 6144
"""IAM's limit on one customer managed policy, whitespace not counted ("IAM and AWS STS
quotas", https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html)."""

BOUNDED_ROLE_ACTIONS: Final = (
    "iam:CreateRole",
    "iam:PutRolePolicy",
    "iam:DeleteRolePolicy",
    "iam:PutRolePermissionsBoundary",
)
"""Role calls granted only when the role carries the stack's boundary
(``iam:PermissionsBoundary``, "Actions, resources, and condition keys for AWS Identity and
Access Management", https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsidentityandaccessmanagementiam.html):
a role the deploy role creates can never do more than the boundary allows."""


class UncoveredType(ValueError):
    """The graph declares a resource type the deploy role has no row for."""


Statement = dict[str, Any]


def _service(action: str) -> str:
    return action.split(":", 1)[0]


def _sid(*words: str) -> str:
    return "".join(re.sub(r"[^A-Za-z0-9]", "", w[:1].upper() + w[1:]) for w in words)


class _Grants:
    """Actions per (resource, condition), merged into statements per service at the end."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str, str], set[str]] = defaultdict(set)
        self.regions: dict[tuple[str, str, str], set[str]] = defaultdict(set)
        self.single: set[tuple[str, str]] = set()

    def add_single(self, action: str, resource: str) -> None:
        """``action`` on ``resource`` in a statement of its own (a secret's value)."""
        info = lookup_action(action)
        if info is None or not any(arn_fits_format(resource, f) for f in info.arn_formats):
            raise ValueError(f"{action} does not exist or accepts no resource {resource}")
        self.single.add((info.name, resource))

    def add(
        self,
        action: str,
        resources: Iterable[str],
        condition: Mapping[str, Any] | None = None,
        *,
        regions: Iterable[str] = (),
    ) -> None:
        info = lookup_action(action)
        if info is None:
            raise ValueError(f"{action} is not an IAM action (policy_sentry)")
        cond = dict(condition or {})
        if not info.arn_formats:
            # No resource type: "*" is the only resource IAM matches; the region still can be.
            key = (info.name, "*", json.dumps(cond, sort_keys=True))
            self.by_key[key].add(info.name)
            self.regions[key].update(regions)
            return
        for resource in resources:
            candidates = [resource, f"{resource}/*"] if _service(action) == "s3" else [resource]
            fitting = [c for c in candidates if any(arn_fits_format(c, f) for f in info.arn_formats)]
            if not fitting:
                raise ValueError(f"{action} accepts no resource {resource}")
            for fit in fitting:
                self.by_key[(_service(info.name), fit, json.dumps(cond, sort_keys=True))].add(
                    info.name
                )

    def statements(self, kind: str) -> list[Statement]:
        """One statement per service, action set and condition, its resources listed."""
        merged: dict[tuple[str, tuple[str, ...], str], set[str]] = defaultdict(set)
        # Resourceless actions of one service, condition and regions share one statement.
        star: dict[tuple[str, str, tuple[str, ...]], set[str]] = defaultdict(set)
        for (key, resource, cond), actions in self.by_key.items():
            if resource == "*":
                regions = tuple(sorted(self.regions[(key, resource, cond)]))
                star[(_service(key), cond, regions)].update(actions)
            else:
                merged[(key, tuple(sorted(actions)), cond)].add(resource)
        statements: list[Statement] = []
        counts: dict[str, int] = defaultdict(int)
        for (service, named, cond), resources in sorted(merged.items()):
            counts[service] += 1
            statements.append(
                _statement(_sid(service, kind, str(counts[service])), named, resources, cond)
            )
        for (service, cond, regions), unscoped in sorted(star.items()):
            counts[service] += 1
            condition = json.loads(cond)
            if regions:
                condition.setdefault("StringEquals", {})["aws:RequestedRegion"] = list(regions)
            sid = _sid(service, kind, "Unscoped", str(counts[service]))
            statements.append(
                _statement(sid, unscoped, {"*"}, json.dumps(condition, sort_keys=True))
            )
        for action, resource in sorted(self.single):
            counts[_service(action)] += 1
            sid = _sid(_service(action), kind, "One", str(counts[_service(action)]))
            statements.append(_statement(sid, [action], [resource], "{}"))
        return sorted(statements, key=lambda s: str(s["Sid"]))


def _statement(
    sid: str, actions: Iterable[str], resources: Iterable[str], cond: str, effect: str = "Allow"
) -> Statement:
    statement: Statement = {
        "Sid": sid,
        "Effect": effect,
        "Action": sorted(actions),
        "Resource": sorted(resources),
    }
    condition = json.loads(cond)
    if condition:
        statement["Condition"] = condition
    return statement


def _custom_types(graph: Graph) -> dict[str, list[Resource]]:
    found: dict[str, list[Resource]] = defaultdict(list)
    for r in graph.resources:
        if r.custom and not r.type.startswith("pulumi:providers:"):
            found[r.type].append(r)
    return dict(found)


def rows_for(graph: Graph) -> dict[str, TypeAccess]:
    """The access row of every resource type the graph declares; UncoveredType otherwise."""
    types = _custom_types(graph)
    missing = sorted(t for t in types if t not in TYPES)
    if missing:
        raise UncoveredType(
            f"stack {graph.stack} declares {', '.join(missing)}, which the deploy role cannot "
            "create: add a row to bootstrap/access.py and run make deploy-policy"
        )
    return {t: TYPES[t] for t in sorted(types)}


def _arns(region: str) -> Arns:
    return Arns(PARTITION, region, ACCOUNT)


def _region(graph: Graph, r: Resource) -> str:
    region = graph.region_of(r)
    if region is None:
        raise ValueError(f"{r.urn} has no explicit provider: its region is unknown")
    return region


def _resources(graph: Graph, row: TypeAccess, members: Sequence[Resource], region: str) -> list[str]:
    arns = _arns(region)
    if row.by_graph:
        return sorted({row.concrete(arns, m.inputs) for m in members if _region(graph, m) == region})
    return [row.pattern(arns, graph.config.prefix)]


def _type_grants(graph: Graph, grants: _Grants, *, writes: bool) -> None:
    members = _custom_types(graph)
    for type_token, row in rows_for(graph).items():
        regions = sorted({_region(graph, m) for m in members[type_token]})
        actions = (*row.reads, *row.writes) if writes else row.reads
        for region in regions:
            cond = row.condition(_arns(region), graph.config.prefix) if row.condition else None
            resources = _resources(graph, row, members[type_token], region)
            for action in actions:
                grants.add(action, resources, cond, regions=[region])
            if writes:
                _secret_reads(graph, grants, row, members[type_token], region)


def _secret_reads(
    graph: Graph, grants: _Grants, row: TypeAccess, members: Sequence[Resource], region: str
) -> None:
    """One statement per secret the graph declares in ``region``, for each value read."""
    for member in members:
        if _region(graph, member) != region:
            continue
        arn = row.concrete(_arns(region), member.inputs)
        for action in row.secret_reads:
            grants.add_single(action, arn)


def _program_reads(graph: Graph, grants: _Grants) -> None:
    """What the program reads while it runs: the Powertools layer, from AWS's public
    parameter where the stack pins no ARN, and the layer version itself, which Lambda needs
    the deployer to be able to read ("Managing permissions for layers",
    https://docs.aws.amazon.com/lambda/latest/dg/permissions-layer.html)."""
    layers: set[tuple[str, str]] = set()
    for function in graph.of_type("aws:lambda/function:Function"):
        region = _region(graph, function)
        for layer in function.inputs.get("layers") or []:
            # arn:aws:lambda:<region>:<account>:layer:<name>:<version>: any version of it.
            parts = str(layer).split(":")
            layer_arn = _arns(region).layer_version(parts[4], parts[6], "*")
            layers.add((region, layer_arn))
        if region not in graph.config.powertools_layer_arns:
            grants.add_single(
                "ssm:GetParameter", _arns(region).public_parameter(POWERTOOLS_PARAMETER)
            )
    for _region_name, layer_arn in sorted(layers):
        grants.add("lambda:GetLayerVersion", [layer_arn])


def _role_statements(graph: Graph) -> list[Statement]:
    """Roles only with the stack's boundary, passed only to the services that run them, and
    never freed of it."""
    arns = _arns("")
    roles = arns.role(f"{graph.config.prefix}-*")
    boundary = arns.role_boundary(graph.config.prefix)
    passed = sorted(
        {row.passes_role_to for row in rows_for(graph).values() if row.passes_role_to}
    )
    return [
        _statement(
            "IamDeployBoundedRoles",
            BOUNDED_ROLE_ACTIONS,
            [roles],
            json.dumps({"StringEquals": {"iam:PermissionsBoundary": boundary}}),
        ),
        _statement(
            "IamDeployPassRole",
            ["iam:PassRole"],
            [roles],
            json.dumps({"StringEquals": {"iam:PassedToService": passed}}),
        ),
        _statement(
            "IamDeployKeepBoundary",
            ["iam:DeleteRolePermissionsBoundary"],
            [roles],
            "{}",
            effect="Deny",
        ),
    ]


def _verify_grants(graph: Graph, grants: _Grants) -> None:
    members = _custom_types(graph)
    for type_token, actions in VERIFY.items():
        if type_token not in members:
            continue
        row = TYPES[type_token]
        for region in sorted({_region(graph, m) for m in members[type_token]}):
            resources = _resources(graph, row, members[type_token], region)
            for action in actions:
                grants.add(action, resources, regions=[region])
            _secret_reads(graph, grants, row, members[type_token], region)


_PREFIXED: Final = "(?<![A-Za-z0-9]){prefix}-|/{prefix}/"


def widen(arn: str, prefix: str) -> str:
    """An ARN of the plan with its name cut after the stack's prefix (``table/dev-dm-pairs``
    -> ``table/dev-*``) and the account as :data:`ACCOUNT`; an ARN naming no prefixed
    resource (a model, an SES identity) is kept as it is."""
    arn = arn.replace(f":{ACCOUNT_ID}:", f":{ACCOUNT}:").replace(f"-{ACCOUNT_ID}", f"-{ACCOUNT}")
    parts = arn.split(":", 5)
    if len(parts) != 6:
        return arn
    match = re.search(_PREFIXED.format(prefix=re.escape(prefix)), parts[5])
    if not match:
        return arn
    parts[5] = parts[5][: match.end()] + "*"
    return ":".join(parts)


def boundary_statements(graph: Graph) -> list[Statement]:
    """The ceiling of every role the stack creates: per service, the actions its role
    policies grant, on the names under the prefix (and the outside ARNs they name)."""
    by_service: dict[tuple[str, bool], tuple[set[str], set[str]]] = defaultdict(
        lambda: (set(), set())
    )
    for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy"):
        for st in policy.policy_statements():
            if st.get("Effect") != "Allow":
                continue
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
            for action in actions:
                star = resources == ["*"]
                acts, res = by_service[(_service(action), star)]
                acts.add(action)
                res.update(widen(r, graph.config.prefix) for r in resources)
    return [
        _statement(_sid("Boundary", service, "Unscoped" if star else ""), acts, res, "{}")
        for (service, star), (acts, res) in sorted(by_service.items())
    ]


def pack(statements: Sequence[Statement], limit: int = MANAGED_POLICY_CHARS) -> list[dict[str, Any]]:
    """Statements packed, in order, into as few policy documents as fit ``limit`` each."""
    documents: list[dict[str, Any]] = []
    current: list[Statement] = []
    for statement in statements:
        trial = {"Version": "2012-10-17", "Statement": [*current, statement]}
        if current and size(trial) > limit:
            documents.append({"Version": "2012-10-17", "Statement": current})
            current = [statement]
        else:
            current.append(statement)
        if size({"Version": "2012-10-17", "Statement": [statement]}) > limit:
            raise ValueError(f"statement {statement['Sid']} alone exceeds {limit} characters")
    if current:
        documents.append({"Version": "2012-10-17", "Statement": current})
    return documents


def size(document: Mapping[str, Any]) -> int:
    """A document's length as IAM counts it (no whitespace)."""
    return len(json.dumps(document, separators=(",", ":")))


def generate(graph: Graph) -> dict[str, Any]:
    """Everything bootstrap/program.py attaches for one stack, from its graph."""
    preview, deploy, verify = _Grants(), _Grants(), _Grants()
    _type_grants(graph, preview, writes=False)
    _type_grants(graph, deploy, writes=True)
    _program_reads(graph, preview)
    _program_reads(graph, deploy)
    _verify_grants(graph, verify)
    boundary = boundary_statements(graph)
    boundary_documents = pack(boundary)
    if len(boundary_documents) != 1:
        raise ValueError(f"the boundary of {graph.stack} exceeds one managed policy")
    regions = sorted({_region(graph, r) for rs in _custom_types(graph).values() for r in rs})
    return {
        "stack": graph.stack,
        "prefix": graph.config.prefix,
        "regions": regions,
        "account": ACCOUNT,
        "boundary": {
            "arn": _arns("").role_boundary(graph.config.prefix),
            "path": ROLE_BOUNDARY_PATH,
            "document": boundary_documents[0],
        },
        "policies": {
            "preview": pack(preview.statements("Preview")),
            "deploy": pack([*deploy.statements("Deploy"), *_role_statements(graph)]),
            "verify": pack(verify.statements("Verify")),
        },
        "unscoped": {t: row.unscoped for t, row in rows_for(graph).items() if row.unscoped},
    }


def statement_counts(generated: Mapping[str, Any], role: str = "deploy") -> dict[str, int]:
    """Statements per service in one role's policies (the figure the docs quote)."""
    counts: dict[str, int] = defaultdict(int)
    for document in generated["policies"][role]:
        for st in document["Statement"]:
            counts[_service(st["Action"][0])] += 1
    return dict(sorted(counts.items()))


def path_for(stack: str) -> Path:
    return GENERATED / f"{stack}.json"


def render(generated: Mapping[str, Any]) -> str:
    return json.dumps(generated, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", action="append", help="default: every stack")
    options = parser.parse_args(argv)
    from components.offline.program import program_graph  # the mock engine, only here

    GENERATED.mkdir(exist_ok=True)
    for stack in options.stack or STACKS:
        generated = generate(program_graph(stack))
        path_for(stack).write_text(render(generated))
        counts = statement_counts(generated)
        total = sum(counts.values())
        print(f"{stack}: {path_for(stack).relative_to(ROOT)}: deploy role {total} statements in "
              f"{len(generated['policies']['deploy'])} managed policies: "
              + ", ".join(f"{s} {n}" for s, n in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
