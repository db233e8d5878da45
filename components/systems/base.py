"""What every system component receives and exposes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pulumi

from components.config import SystemSettings
from components.deployment import Deployment
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
