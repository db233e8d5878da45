"""Build PolicyResource objects by hand, for tests and for converting the mock engine's graph.

Properties use the engine's camelCase names and are wrapped in CrossGuard's unknown-checking
proxy, so a rule meets them exactly as under ``pulumi preview``; a value equal to
:data:`UNKNOWN_STRING` is unknown (reading it through the proxy raises).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

PROJECT: Final = "crm-automations"
UNKNOWN_STRING: Final = UNKNOWN_STRING_VALUE
"""The engine's sentinel for a string unknown at preview."""

Spec = tuple[str, str, Mapping[str, Any]]
"""``(type token, logical name, properties)``."""


def urn_for(resource_type: str, name: str, *, stack: str = "dev", project: str = PROJECT) -> str:
    """A URN as the engine writes it: ``urn:pulumi:<stack>::<project>::<type>::<name>``."""
    return f"urn:pulumi:{stack}::{project}::{resource_type}::{name}"


def make_resource(
    resource_type: str,
    name: str,
    props: Mapping[str, Any],
    *,
    stack: str = "dev",
    urn: str | None = None,
    parent: PolicyResource | None = None,
    dependencies: Sequence[PolicyResource] = (),
    ignore_changes: Sequence[str] = (),
) -> PolicyResource:
    """One PolicyResource with proxied (CrossGuard-like) properties."""
    opts = PolicyResourceOptions(
        protect=False,
        ignore_changes=list(ignore_changes),
        delete_before_replace=None,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
        parent=parent.urn if parent is not None else None,
    )
    return PolicyResource(
        resource_type,
        unknown_checking_proxy(copy.deepcopy(dict(props))),
        urn or urn_for(resource_type, name, stack=stack),
        name,
        opts,
        None,
        parent,
        list(dependencies),
        {},
    )


def make_resources(
    specs: Iterable[Spec],
    *,
    stack: str = "dev",
    depends_on: Mapping[str, Sequence[str]] | None = None,
) -> list[PolicyResource]:
    """PolicyResources from ``(type, name, props)`` tuples; ``depends_on`` maps a logical name
    to the logical names it waits for (declared earlier in ``specs``)."""
    made: dict[str, PolicyResource] = {}
    out: list[PolicyResource] = []
    for t, n, p in specs:
        waits = [made[d] for d in (depends_on or {}).get(n, ())]
        resource = make_resource(t, n, p, stack=stack, dependencies=waits)
        made[n] = resource
        out.append(resource)
    return out
