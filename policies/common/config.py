"""Reading a rule's pack config: typed getters with defaults, and JSON-schema fragments.

CrossGuard passes each policy the properties configured under its name (``pulumi preview
--policy-pack policies --policy-pack-config config.json`` with ``{"<policy>": {...}}``); the
CLI validates them against the policy's ``config_schema``. The getters validate again, so the
same policy objects behave identically under :func:`policies.runner.evaluate`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_policy import PolicyConfigSchema

from policies.common.props import stack_of


class PolicyConfigError(ValueError):
    """A pack config value of the wrong type."""


def string_list(description: str, default: Sequence[str]) -> dict[str, Any]:
    """Schema of a list of strings."""
    return {
        "type": "array",
        "items": {"type": "string"},
        "description": description,
        "default": list(default),
    }


def schema(**properties: dict[str, Any]) -> PolicyConfigSchema:
    """A PolicyConfigSchema from keyword properties."""
    return PolicyConfigSchema(properties=dict(properties))


def get_strings(config: Mapping[str, Any], key: str, default: Sequence[str]) -> tuple[str, ...]:
    """``config[key]`` as a tuple of strings, or ``default``."""
    value = config.get(key)
    if value is None:
        return tuple(default)
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise PolicyConfigError(f"{key} must be a list of strings (given: {value!r})")
    items = list(value)
    if not all(isinstance(item, str) for item in items):
        raise PolicyConfigError(f"{key} must be a list of strings (given: {value!r})")
    return tuple(items)


def replace_or_extend(
    config: Mapping[str, Any], key: str, extra_key: str, default: Iterable[str]
) -> frozenset[str]:
    """``config[key]`` replaces the default list, ``config[extra_key]`` adds to it."""
    base = get_strings(config, key, tuple(default))
    return frozenset(base) | frozenset(get_strings(config, extra_key, ()))


def get_int(config: Mapping[str, Any], key: str, default: int) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise PolicyConfigError(f"{key} must be an integer (given: {value!r})")
    return int(value)


def get_str(config: Mapping[str, Any], key: str) -> str | None:
    value = config.get(key)
    if value is None or isinstance(value, str):
        return value or None
    raise PolicyConfigError(f"{key} must be a string (given: {value!r})")


ENVIRONMENT_SCHEMA: dict[str, dict[str, Any]] = {
    "environment": {
        "type": "string",
        "description": (
            "The stack's environment (dev, prod...). Default: the Pulumi stack name, read "
            "from the resources' URNs or PULUMI_STACK."
        ),
    },
    "protectedEnvironments": string_list(
        "Environments whose data is protected (deletion protection required)", ("prod",)
    ),
}


def environment(config: Mapping[str, Any], urns: Iterable[str]) -> str | None:
    """The configured environment, else the stack name of the URNs, else ``PULUMI_STACK``."""
    configured = get_str(config, "environment")
    if configured:
        return configured
    stacks = {s for s in (stack_of(u) for u in urns) if s}
    if len(stacks) == 1:
        return stacks.pop()
    return os.environ.get("PULUMI_STACK") or None


def is_protected(config: Mapping[str, Any], urns: Iterable[str]) -> tuple[bool, str | None]:
    """Whether data protection applies, and the environment it was decided from."""
    env = environment(config, urns)
    protected = get_strings(config, "protectedEnvironments", ("prod",))
    return env is not None and env in protected, env
