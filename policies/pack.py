"""Every policy of the pack, importable without starting the analyzer.

``PolicyPack(...)`` starts a gRPC server and never returns, so only ``policies/__main__.py``
constructs it; everything else (tests, the offline plan) imports :data:`ALL_POLICIES`.
"""

from __future__ import annotations

from typing import Final

from pulumi_policy import Policy

from policies.rules import (
    bucket_hygiene,
    creation_order,
    event_source_mapping_permissions,
    failures_are_watched,
    function_identity,
    log_retention,
    model_access_allowlist,
    no_secrets_in_env,
    no_wildcard_write,
    nothing_always_on,
    one_secret_per_grant,
    personal_data_retained,
    public_surface_allowlist,
    public_surface_capped,
    queue_consumers_paced,
    queue_hygiene,
    scheduler_trust,
    secret_value_kept,
    service_invoke_source_condition,
    service_publisher_encryption,
    table_hygiene,
    tag_values,
    unique_function_role,
    valid_iam,
)

ALL_POLICIES: Final[list[Policy]] = [
    valid_iam.POLICY,
    no_wildcard_write.POLICY,
    one_secret_per_grant.POLICY,
    unique_function_role.POLICY,
    public_surface_allowlist.POLICY,
    public_surface_capped.POLICY,
    model_access_allowlist.POLICY,
    nothing_always_on.POLICY,
    function_identity.POLICY,
    log_retention.POLICY,
    personal_data_retained.POLICY,
    queue_hygiene.POLICY,
    queue_consumers_paced.POLICY,
    table_hygiene.POLICY,
    bucket_hygiene.POLICY,
    tag_values.POLICY,
    no_secrets_in_env.POLICY,
    scheduler_trust.POLICY,
    service_publisher_encryption.POLICY,
    event_source_mapping_permissions.POLICY,
    service_invoke_source_condition.POLICY,
    failures_are_watched.POLICY,
    creation_order.POLICY,
    secret_value_kept.POLICY,
]
"""The pack's policies, every one MANDATORY."""

POLICIES_BY_NAME: Final[dict[str, Policy]] = {p.name: p for p in ALL_POLICIES}
