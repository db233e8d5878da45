"""SecretSlot: a Secrets Manager secret whose value the operator sets, read at call time.

The program creates the secret without a value, so no secret ever passes through Pulumi state
or a Lambda environment. Each slot hands out a GetSecretValue grant naming exactly this one
secret, which is why the documents keep several secrets instead of one JSON blob.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.deployment import Deployment
from components.grants import Grant


@dataclass(frozen=True)
class SecretSlotArgs:
    """Arguments of :class:`SecretSlot`.

    Attributes:
        deployment: Where the secret lives.
        name: The secret's seed name (``dm-crm-read``); physical ``<prefix>-<name>``.
        description: What the value is and who sets it (shown to the operator).
    """

    deployment: Deployment
    name: str
    description: str


class SecretSlot(pulumi.ComponentResource):
    """An empty secret and its single-secret read grant."""

    secret: aws.secretsmanager.Secret

    def __init__(
        self, resource_name: str, args: SecretSlotArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("crm:index:SecretSlot", resource_name, None, opts)
        d = args.deployment
        self.args = args
        self.physical_name = d.name(args.name)
        self.arn = d.arns.secret(self.physical_name)
        self.secret = aws.secretsmanager.Secret(
            resource_name,
            name=self.physical_name,
            description=args.description,
            recovery_window_in_days=30 if d.protect_data else 0,
            tags=d.resource_tags(**{"crm:secret": args.name}),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"secret_name": self.secret.name})

    def grant_read(self, *, sid: str | None = None) -> Grant:
        """GetSecretValue on this secret only."""
        name = "".join(p.capitalize() for p in self.args.name.split("-"))
        return Grant(sid or f"Read{name}Secret", ("secretsmanager:GetSecretValue",), (self.arn,))
