"""What every system component receives and exposes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pulumi

from components.config import SystemSettings
from components.deployment import Deployment
from components.systems.function_factory import FunctionFactory
from handlers.common import api_versions

S = TypeVar("S", bound=SystemSettings)


@dataclass(frozen=True)
class SystemArgs(Generic[S]):
    """Arguments of a system component.

    Attributes:
        deployment: The system's region, prefix and provider.
        settings: The system's validated section of the stack config.
        hubspot_api_version: The stack's ``hubspotApiVersion``, for the systems calling HubSpot.
    """

    deployment: Deployment
    settings: S
    hubspot_api_version: str = api_versions.HUBSPOT_DEFAULT_VERSION


@dataclass(frozen=True)
class Build(Generic[S]):
    """What each function step of a system is given (one signature for every step).

    Attributes:
        d: The system's deployment.
        s: The system's settings.
        function: Declares one function of the system.
        values: Every value the system's functions' settings read; a step may add one for the
            steps after it (a Function URL).
    """

    d: Deployment
    s: S
    function: FunctionFactory
    values: dict[str, Any]


class System(pulumi.ComponentResource):
    """Base of the five systems: a component whose ``exports`` become stack outputs."""

    exports: dict[str, Any]

    def __init__(
        self, type_name: str, resource_name: str, opts: pulumi.ResourceOptions | None
    ) -> None:
        super().__init__(f"crm:index:{type_name}", resource_name, None, opts)
        self.exports = {}

    def finish(self, exports: dict[str, Any]) -> None:
        """Record the operator-facing outputs and register them on the component."""
        self.exports = exports
        self.register_outputs(exports)


def settings_values(settings: SystemSettings) -> dict[str, Any]:
    """Every stack setting of a system by its field name. A function's settings record whose
    field has a setting's name takes it from here, so a system's ``_environment`` names only
    the rest (resource names, derived values) and cannot restate a setting under its own name."""
    return {name: getattr(settings, name) for name in type(settings).model_fields}

