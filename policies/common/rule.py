"""Small helpers shared by the rule modules: building MANDATORY policies and reporting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from policies.common.documents import Document, documents_of
from policies.common.props import props_of

StackCheck = Callable[[StackValidationArgs, ReportViolation], None]
ResourceCheck = Callable[[ResourceValidationArgs, ReportViolation], None]


def stack_policy(
    name: str,
    description: str,
    validate: StackCheck,
    *,
    remediation: str,
    config_schema: PolicyConfigSchema | None = None,
) -> StackValidationPolicy:
    """A MANDATORY stack policy."""
    return StackValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=EnforcementLevel.MANDATORY,
        config_schema=config_schema,
        remediation_steps=remediation,
    )


def resource_policy(
    name: str,
    description: str,
    validate: ResourceCheck,
    *,
    remediation: str,
    config_schema: PolicyConfigSchema | None = None,
) -> ResourceValidationPolicy:
    """A MANDATORY resource policy."""
    return ResourceValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=EnforcementLevel.MANDATORY,
        config_schema=config_schema,
        remediation_steps=remediation,
    )


def documents_for(args: ResourceValidationArgs) -> list[Document]:
    """The IAM documents of the resource being validated."""
    return documents_of(args.resource_type, props_of(args), args.urn, args.name)


def config_of(args: Any) -> dict[str, Any]:
    """The policy's config as a plain dict."""
    getter = getattr(args, "get_config", None)
    config = getter() if callable(getter) else None
    return dict(config) if config else {}
