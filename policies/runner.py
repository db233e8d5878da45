"""Run the pack's policy objects over a list of PolicyResources, as CrossGuard would.

CI has no Pulumi CLI, so the offline plan and the infra tests convert the mock engine's graph
into :class:`pulumi_policy.PolicyResource` objects and call :func:`evaluate`. Each policy is
run the way the analyzer runs it: a ResourceValidationPolicy once per resource with
``ResourceValidationArgs`` (the reported URN is the resource's), a StackValidationPolicy once
with ``StackValidationArgs``; awaitables are awaited; ``not_applicable`` counts as a pass. A
policy that trips over an unknown value (CrossGuard would only warn) is reported as a
violation here: the project keeps everything the rules read known at preview.

Config: a mapping whose keys are policy names map to that policy's properties (the shape of
``--policy-pack-config``); any other key is shared and given to every policy whose
``config_schema`` declares it (``{"environment": "prod"}``). Unknown keys raise ValueError;
``{"<policy>": {"enforcementLevel": "disabled"}}`` skips a policy, as CrossGuard would.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_policy import (
    Policy,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.policy import _NotApplicableError
from pulumi_policy.proxy import UnknownValueError

from policies.pack import ALL_POLICIES


@dataclass(frozen=True)
class Violation:
    """One finding.

    Attributes:
        policy_name: The rule that found it (``no-wildcard-write``).
        message: What is wrong and where, without the policy's description.
        urn: The resource it is about, or None for the stack as a whole.
    """

    policy_name: str
    message: str
    urn: str | None

    @property
    def policy(self) -> str:
        """Alias of :attr:`policy_name`."""
        return self.policy_name

    def __str__(self) -> str:
        where = f" [{self.urn}]" if self.urn else ""
        return f"{self.policy_name}: {self.message}{where}"


def _schema_keys(policy: Policy) -> frozenset[str]:
    schema = policy.config_schema
    return frozenset(schema.properties) if schema is not None else frozenset()


def policy_configs(
    config: Mapping[str, Any] | None, policies: Sequence[Policy] = ALL_POLICIES
) -> dict[str, dict[str, Any]]:
    """Each policy's config from a pack-level mapping (see the module docstring)."""
    every = [*ALL_POLICIES, *policies]
    names = {p.name for p in every}
    given = dict(config or {})
    shared = {k: v for k, v in given.items() if k not in names}
    declared = frozenset().union(*(_schema_keys(p) for p in every))
    unknown = sorted(set(shared) - declared)
    if unknown:
        raise ValueError(f"unknown policy pack config key(s): {', '.join(unknown)}")
    result: dict[str, dict[str, Any]] = {}
    for policy in policies:
        keys = _schema_keys(policy)
        own = given.get(policy.name) or {}
        if not isinstance(own, Mapping):
            raise ValueError(f"config of {policy.name} must be a mapping")
        extra = sorted(set(own) - keys - {"enforcementLevel"})
        if extra:
            raise ValueError(f"{policy.name} has no config key(s) {', '.join(extra)}")
        merged = {k: v for k, v in shared.items() if k in keys}
        merged.update({k: v for k, v in own.items() if k != "enforcementLevel"})
        result[policy.name] = merged
    return result


def _settle(result: Any) -> None:
    if result is not None and inspect.isawaitable(result):
        awaitable: Awaitable[Any] = result

        async def wait() -> None:
            await awaitable

        asyncio.run(wait())


def _options(resource: PolicyResource) -> PolicyResourceOptions:
    opts = getattr(resource, "opts", None)
    if isinstance(opts, PolicyResourceOptions):
        return opts
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)


def run_policy(
    policy: Policy, resources: Sequence[PolicyResource], config: Mapping[str, Any]
) -> list[Violation]:
    """The violations one policy reports over ``resources``."""
    found: list[Violation] = []

    def run(call: Any, default_urn: str | None, force_urn: bool) -> None:
        def report(message: str, urn: str | None = None) -> None:
            found.append(Violation(policy.name, message, default_urn if force_urn else urn))

        try:
            _settle(call(report))
        except _NotApplicableError:
            return
        except UnknownValueError as err:
            found.append(
                Violation(policy.name, f"cannot run at preview: {err.message}", default_urn)
            )

    if isinstance(policy, ResourceValidationPolicy):
        for resource in resources:
            args = ResourceValidationArgs(
                resource.resource_type,
                resource.props,
                resource.urn,
                resource.name,
                _options(resource),
                resource.provider,
                dict(config),
            )
            run(lambda report, a=args: policy.validate(a, report), resource.urn, True)
    elif isinstance(policy, StackValidationPolicy):
        stack_args = StackValidationArgs(list(resources), dict(config))
        run(lambda report: policy.validate(stack_args, report), None, False)
    else:  # pragma: no cover - the pack holds only these two kinds
        raise TypeError(f"unsupported policy {policy!r}")
    return found


def evaluate(
    resources: Sequence[PolicyResource],
    config: Mapping[str, Any] | None = None,
    *,
    policies: Iterable[Policy] | None = None,
) -> list[Violation]:
    """Every violation the pack (or ``policies``) reports over ``resources``."""
    chosen = list(policies) if policies is not None else list(ALL_POLICIES)
    configs = policy_configs(config, chosen)
    disabled = {
        name
        for name, own in (config or {}).items()
        if isinstance(own, Mapping) and str(own.get("enforcementLevel", "")).lower() == "disabled"
    }
    chosen = [p for p in chosen if p.name not in disabled]
    violations: list[Violation] = []
    for policy in chosen:
        violations.extend(run_policy(policy, resources, configs[policy.name]))
    return violations
