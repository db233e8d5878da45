"""Helpers the system graph tests share: one system enabled, its functions and grants."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from components.offline.engine import ACCOUNT_ID, ROOT, Graph, Resource
from testsupport.graphs import shared

Statement = tuple[tuple[str, ...], tuple[str, ...]]
"""A grant as (actions, resources), comparable as a set member."""


def arns_in(region: str) -> Callable[[str, str], str]:
    """``arn(service, resource)``: the ARN of a resource of the offline account in ``region``."""

    def arn(service: str, resource: str) -> str:
        return f"arn:aws:{service}:{region}:{ACCOUNT_ID}:{resource}"

    return arn


def run(stack: str, overrides: Mapping[str, Any] | None = None) -> Graph:
    """``components.offline.engine.run``, built once per test run for each (stack, overrides)
    and shared by the xdist workers (testsupport/graphs.py); every call gets its own copy."""
    return shared().run(stack, overrides)


def only_system(key: str, stack: str = "dev", **changes: Any) -> dict[str, Any]:
    """The stack file's own systems section with only ``key`` enabled (and ``changes`` to it)."""
    config = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    systems = config["crm-automations:systems"]
    found = {name: {**section, "enabled": name == key} for name, section in systems.items()}
    found[key].update(changes)
    return found


def functions(graph: Graph) -> dict[str, Resource]:
    """The graph's functions by physical name."""
    return {r.inputs["name"]: r for r in graph.of_type("aws:lambda/function:Function")}


def statements_of(graph: Graph, function: str, prefix: str = "dev") -> list[dict[str, Any]]:
    """The statements of a function's one inline policy; every one is an Allow."""
    policy = graph.named("aws:iam/rolePolicy:RolePolicy", f"{prefix}-{function}-grants")
    found: list[dict[str, Any]] = json.loads(policy.inputs["policy"])["Statement"]
    assert all(s["Effect"] == "Allow" for s in found)
    return found


def grants_of(graph: Graph, function: str) -> set[Statement]:
    """A function's grants as (actions, resources) pairs."""
    return {(tuple(s["Action"]), tuple(s["Resource"])) for s in statements_of(graph, function)}


DOCUMENTS_STORE: dict[str, Any] = {"secretStore": "secretsmanager"}
"""The documents' secret store (secretStore's default; both stack files choose Parameter
Store). The per-system tests check the documents' grants in their words, GetSecretValue on one
secret; tests/infra/test_secret_store.py proves each parameter is read by the same roles."""
