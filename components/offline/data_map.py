"""The data map: every table, bucket, queue and log group of both stacks, and what it holds
about people, read from the program's graph.

Each store component records its declaration (components/personal_data.py) as its input; a
store's declaration is its nearest ancestor component's. The map says per store: the system,
its region, the fields, why they are kept, how long (the config key) and how they are erased,
the last from what the graph actually declares (the TTL attribute, the lifecycle rule, the
message or log retention). ``make docs`` writes it into docs/personal-data.md;
tests/infra/test_data_map.py fails when a store of either stack has no declaration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from components.offline.engine import Graph, Resource
from components.personal_data import from_inputs

STORES: Final = {
    "aws:dynamodb/table:Table": "table",
    "aws:s3/bucket:Bucket": "bucket",
    "aws:sqs/queue:Queue": "queue",
    "aws:cloudwatch/logGroup:LogGroup": "log group",
}
"""The resource types that keep data, and what the map calls them."""
LIFECYCLE: Final = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
KINDS_SAID: Final = {"held": "personal data", "suppression": "suppression list", "none": "nothing personal"}


@dataclass(frozen=True)
class Entry:
    """One store of one stack and its declaration.

    Attributes:
        stack: The stack.
        kind: ``table``, ``bucket``, ``queue`` or ``log group``.
        name: The store's name without the stack prefix (``rrs-audit``).
        system: The system key (``rrs``).
        region: Its AWS region.
        declared: The declaration (``personal_data.component_inputs``), None when missing.
        ends: How the graph ends what it holds (``DynamoDB TTL on expires_at``), or "".
    """

    stack: str
    kind: str
    name: str
    system: str
    region: str
    declared: Mapping[str, Any] | None
    ends: str


def _declaration(by_urn: Mapping[str, Resource], resource: Resource) -> Mapping[str, Any] | None:
    parent = by_urn.get(resource.parent or "")  # the stack itself is not recorded
    while parent is not None:
        found = from_inputs(parent.inputs)
        if found is not None:
            return found
        parent = by_urn.get(parent.parent or "")
    return None


def _days(seconds: Any) -> str:
    return f"{float(seconds) / 86400:g} days"


def _ends(graph: Graph, resource: Resource, kind: str) -> str:
    inputs = resource.inputs
    if kind == "table":
        ttl = inputs.get("ttl") or {}
        return f"DynamoDB TTL on `{ttl['attributeName']}`" if ttl.get("enabled") else ""
    if kind == "queue":
        retention = inputs.get("messageRetentionSeconds")
        return f"SQS retention, {_days(retention)}" if retention else ""
    if kind == "log group":
        days = inputs.get("retentionInDays")
        return f"log retention, {days:g} days" if isinstance(days, int | float) else ""
    said = []
    for rules in (
        r.inputs.get("rules") or []
        for r in graph.of_type(LIFECYCLE)
        if r.inputs.get("bucket") == resource.physical_name
    ):
        for rule in rules:
            if rule.get("status") != "Enabled":
                continue
            if (rule.get("expiration") or {}).get("days"):
                said.append(f"objects after {rule['expiration']['days']:g} days")
            if (rule.get("noncurrentVersionExpiration") or {}).get("noncurrentDays"):
                days = rule["noncurrentVersionExpiration"]["noncurrentDays"]
                said.append(f"old versions {days:g} days after they are replaced")
    return f"S3 lifecycle: {', '.join(said)}" if said else ""


def _name(resource: Resource, prefix: str) -> str:
    name = resource.physical_name or resource.name
    if resource.type == "aws:s3/bucket:Bucket":
        name = name.rsplit("-", 1)[0]  # the account id
    if name.startswith("/aws/lambda/"):
        name = name.removeprefix("/aws/lambda/")
    return name.removeprefix(f"{prefix}-")


def entries(graph: Graph) -> list[Entry]:
    """Every store of the graph with its declaration."""
    found = []
    by_urn = {r.urn: r for r in graph.resources}
    for resource in graph.resources:
        kind = STORES.get(resource.type)
        if kind is None:
            continue
        tags = resource.inputs.get("tags") or {}
        found.append(
            Entry(
                graph.stack,
                kind,
                _name(resource, graph.config.prefix),
                str(tags.get("crm:system", "")),
                graph.region_of(resource) or "",
                _declaration(by_urn, resource),
                _ends(graph, resource, kind),
            )
        )
    return found


def missing(graph: Graph) -> list[str]:
    """The stores of the graph that declare nothing (each must say what it holds)."""
    return [
        f"{graph.stack}: {e.kind} {e.name} declares nothing about personal data"
        for e in entries(graph)
        if e.declared is None
    ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _how_long(declared: Mapping[str, Any]) -> str:
    retention = declared.get("retention")
    if declared["kind"] == "suppression":
        return "no end: a suppression list"
    if not retention:
        return ""
    days = float(retention["days"])
    key = f"`{retention['key']}`" if retention["key"] else "fixed"
    return f"{days:g} days ({key}): {retention['why']}"


def _region(regions: Mapping[str, str]) -> str:
    if len(set(regions.values())) == 1:
        return next(iter(regions.values()))
    return ", ".join(f"{stack}: {region}" for stack, region in sorted(regions.items()))


def render(graphs: Sequence[Graph]) -> str:
    """The map's Markdown: the stores holding personal data (one row per store, or per group
    of stores with one declaration, as a system's log groups), then the others."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for graph in graphs:
        for e in entries(graph):
            if e.declared is None:
                raise ValueError(f"{e.stack}: {e.kind} {e.name} declares nothing (make docs)")
            group = (e.system, e.kind, repr(sorted(e.declared.items())))
            row = rows.setdefault(group, {"names": set(), "regions": {}, "ends": set(), "declared": e.declared})
            row["names"].add(e.name)
            row["regions"][e.stack] = e.region
            row["ends"].add(e.ends)
    held = [
        "| Store | System | Region | Holds | Why | How long | How it ends |",
        "|---|---|---|---|---|---|---|",
    ]
    other = ["| Store | System | Holds |", "|---|---|---|"]
    for (system, kind, _), row in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1], sorted(kv[1]["names"]))):
        declared = row["declared"]
        names = sorted(row["names"])
        store = f"{kind} `{names[0]}`" if len(names) == 1 else f"{len(names)} {kind}s: " + ", ".join(f"`{n}`" for n in names)
        if declared["kind"] == "none":
            other.append(f"| {store} | {system} | {_cell(declared['holds'])} |")
            continue
        ends = "; ".join(sorted(e for e in row["ends"] if e)) or "nothing: kept"
        held.append(
            f"| {store} | {system} | {_region(row['regions'])} | "
            f"{_cell(', '.join(declared['fields']))} | {_cell(declared['why'])} | "
            f"{_cell(_how_long(declared))} | {_cell(ends)}; {_cell(declared['onRequest'])} |"
        )
    return "\n".join(
        [*held, "", "Stores that hold nothing about people:", "", *other]
    )
