"""table-hygiene: DynamoDB tables are on-demand, recoverable and, in prod, protected.

What: every DynamoDB table has ``billingMode`` ``PAY_PER_REQUEST``, point-in-time recovery
enabled (``pointInTimeRecovery.enabled``) and, when the stack is a protected environment,
``deletionProtectionEnabled``. The environment is the pack config's ``environment`` if set,
else the Pulumi stack name (from the resource's URN, else ``PULUMI_STACK``); it is protected
when listed in ``protectedEnvironments`` (default ``prod``).

Why: "on-demand" tables (all documents); the tables hold the only copy of decisions that must
never be lost ("Never expire the not-a-duplicate decisions", 000) and of exactly-once guards,
so an accidental write or delete must be recoverable, and prod tables must not be deletable by
a stray ``pulumi destroy``.

Fix: use ``GuardedTable``; it sets on-demand billing, PITR, and deletion protection in prod.
"""

from __future__ import annotations

from typing import Final

from pulumi_policy import ReportViolation, ResourceValidationArgs

from policies.common.config import ENVIRONMENT_SCHEMA, is_protected, schema
from policies.common.props import get_path, props_of
from policies.common.rule import config_of, resource_policy

NAME: Final = "table-hygiene"
TABLE: Final = "aws:dynamodb/table:Table"


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != TABLE:
        return
    props = props_of(args)
    label = f"DynamoDB table {props.get('name') or args.name}"
    if props.get("billingMode") != "PAY_PER_REQUEST":
        report(f"{label} is not on-demand (billingMode {props.get('billingMode')!r})", None)
    if get_path(props, "pointInTimeRecovery", "enabled") is not True:
        report(f"{label} has no point-in-time recovery", None)
    protected, environment = is_protected(config_of(args), [args.urn])
    if protected and props.get("deletionProtectionEnabled") is not True:
        report(f"{label} has no deletion protection in environment {environment}", None)


POLICY: Final = resource_policy(
    NAME,
    "DynamoDB tables are PAY_PER_REQUEST with point-in-time recovery, and deletion-protected in prod.",
    _validate,
    remediation=(
        "Set billing_mode=PAY_PER_REQUEST, point_in_time_recovery.enabled=True and, in prod, "
        "deletion_protection_enabled=True (GuardedTable does)."
    ),
    config_schema=schema(**ENVIRONMENT_SCHEMA),
)
