"""The mock engine's graph as CrossGuard sees a stack, judged by the same policy objects.

CrossGuard hands a stack policy ``PolicyResource`` objects (type, props, urn, name, parent);
this builds exactly those from the recorded registrations, so the rules that ``pulumi preview
--policy-pack policies`` runs are the rules CI runs here, without the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions

from components.offline.engine import Graph, Resource
from policies.runner import Violation, evaluate


def policy_resources(graph: Graph | Sequence[Resource]) -> list[PolicyResource]:
    """Custom resources of the graph (or of any program's registrations) as CrossGuard's
    PolicyResource objects."""
    by_urn: dict[str, PolicyResource] = {}
    ordered: list[PolicyResource] = []
    for r in graph.resources if isinstance(graph, Graph) else graph:
        opts = PolicyResourceOptions(
            protect=False,
            ignore_changes=list(r.ignore_changes),
            delete_before_replace=None,
            aliases=[],
            custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
            additional_secret_outputs=[],
            parent=r.parent,
        )
        resource = PolicyResource(
            resource_type=r.type,
            props=r.inputs,
            urn=r.urn,
            name=r.name,
            opts=opts,
            provider=None,
            parent=by_urn.get(r.parent) if r.parent else None,
            # Registered before r (the engine awaits them), so already converted.
            dependencies=[by_urn[d] for d in r.dependencies if d in by_urn],
            property_dependencies={},
        )
        by_urn[r.urn] = resource
        if r.custom and not r.type.startswith("pulumi:providers:"):
            ordered.append(resource)
    return ordered


def evaluate_graph(graph: Graph, config: Mapping[str, Any] | None = None) -> list[Violation]:
    """Every violation the policy pack reports for this graph."""
    pack_config: dict[str, Any] = {"environment": graph.config.environment}
    pack_config.update(config or {})
    violations: list[Violation] = evaluate(policy_resources(graph), pack_config)
    return violations
