"""SecretSlot: a secret whose value the operator sets, read at call time.

The stack's ``secretStore`` picks where it lives:

- ``secretsmanager`` (the documents' store): a Secrets Manager secret created without a value.
- ``ssm``: a Parameter Store ``SecureString`` under the AWS managed key ``aws/ssm``, named
  ``/<prefix>/<name>``. Parameter Store needs a value to create a parameter, so the program
  writes :data:`PLACEHOLDER` once as a write-only value (``value_wo``: never stored in Pulumi
  state, never read back); the operator's value (``make secrets``) is version 2 or later,
  which is how ``make verify`` tells a set parameter from an unset one without reading it.
  From then on the program never writes the value again: see :data:`SET_ONCE`.

Either way no secret passes through Pulumi state or a Lambda environment, and each slot hands
out a read grant naming exactly this one secret, which is why the documents keep several
secrets instead of one JSON blob. A parameter's grant is ``ssm:GetParameter`` alone: the
``aws/ssm`` key's policy lets every principal of the account decrypt through Parameter Store
(https://docs.aws.amazon.com/systems-manager/latest/userguide/ps-restrict-decryption.html), so
the per-parameter ``GetParameter`` grant is what keeps one function from another's secret,
and a ``kms:Decrypt`` statement would add nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import pulumi
import pulumi_aws as aws

from components.deployment import Deployment
from components.grants import Grant

PLACEHOLDER: Final = "unset: make secrets sets this parameter"
"""Version 1 of every parameter; no handler accepts it as a credential (it is not one)."""

STORES: Final = ("secretsmanager", "ssm")

SET_ONCE: Final = (
    "allowed_pattern",
    "arn",
    "data_type",
    "description",
    "insecure_value",
    "key_id",
    "tier",
    "type",
    "value",
    "value_wo",
    "value_wo_version",
)
"""A parameter's inputs the program sets at creation only (``ignore_changes``).

The provider's update sends PutParameter whenever any input but ``tags`` and ``overwrite``
changes, with ``value_wo`` when ``value_wo_version`` changed and otherwise the value it holds in
state, which for a write-only parameter is empty (``resourceParameterUpdate`` in
https://github.com/hashicorp/terraform-provider-aws/blob/0073593e7d6993ba482409f4dc35438daaa79bb3/internal/service/ssm/parameter.go).
So a new description or tier would fail the update (PutParameter needs a value of at least one
character: https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_PutParameter.html)
and a new ``value_wo_version`` would put the placeholder over the operator's secret. Ignored,
they keep their state value and the provider sends nothing (Pulumi's ``ignoreChanges``:
https://www.pulumi.com/docs/iac/concepts/options/ignorechanges/). Tags still update (their
own TagResource calls); a new ``name`` or ``region`` is a new, empty parameter, which
``make plan BASE=...`` lists among the replacements. Rotating a value is
``make secrets REPLACE=<name>``."""


def physical_name(d: Deployment, name: str) -> str:
    """The secret's name in its store: ``dev-dm-crm-read`` or ``/dev/dm-crm-read``."""
    return f"/{d.prefix}/{name}" if d.secret_store == "ssm" else d.name(name)


@dataclass(frozen=True)
class SecretSlotArgs:
    """Arguments of :class:`SecretSlot`.

    Attributes:
        deployment: Where the secret lives (its ``secret_store`` picks the service).
        name: The secret's seed name (``dm-crm-read``).
        description: What the value is and who sets it (shown to the operator).
    """

    deployment: Deployment
    name: str
    description: str


class SecretSlot(pulumi.ComponentResource):
    """An empty secret (or placeholder parameter) and its single-secret read grant."""

    resource: aws.secretsmanager.Secret | aws.ssm.Parameter

    def __init__(
        self, resource_name: str, args: SecretSlotArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("crm:index:SecretSlot", resource_name, None, opts)
        d = args.deployment
        if d.secret_store not in STORES:
            raise ValueError(f"secret_store must be one of {STORES}")
        self.args = args
        self.store = d.secret_store
        self.physical_name = physical_name(d, args.name)
        tags = d.resource_tags(**{"crm:secret": args.name})
        if self.store == "ssm":
            self.arn = d.arns.ssm_parameter(self.physical_name)
            self.resource = aws.ssm.Parameter(
                resource_name,
                name=self.physical_name,
                type="SecureString",
                tier="Standard",
                description=args.description,
                value_wo=PLACEHOLDER,
                value_wo_version=1,
                tags=tags,
                opts=pulumi.ResourceOptions(
                    parent=self, protect=d.protect_data, ignore_changes=list(SET_ONCE)
                ),
            )
        else:
            self.arn = d.arns.secret(self.physical_name)
            self.resource = aws.secretsmanager.Secret(
                resource_name,
                name=self.physical_name,
                description=args.description,
                recovery_window_in_days=30 if d.protect_data else 0,
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs({"secret_name": self.resource.name})

    def grant_read(self, *, sid: str | None = None) -> Grant:
        """Read this secret only: GetSecretValue, or GetParameter on the one parameter."""
        name = "".join(p.capitalize() for p in self.args.name.split("-"))
        action = "ssm:GetParameter" if self.store == "ssm" else "secretsmanager:GetSecretValue"
        return Grant(sid or f"Read{name}Secret", (action,), (self.arn,))
