"""Where a block is deployed: stack prefix, environment, account and region.

Every building block receives one ``Deployment``. It names things (``<prefix>-<seed name>``),
builds ARNs from known values, and carries the region's explicit provider, so that nothing in
the program depends on the ambient ``aws:region``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components.arns import Arns
from components.grants import Grant
from components.mail_identity import MailIdentities
from components.monitoring import Monitoring, declare_alarm, degraded, spend_cap, unconfirmed_sends


@dataclass(frozen=True)
class Deployment:
    """The stack-and-region context shared by the blocks of one system.

    Attributes:
        prefix: Stack prefix (``dev``, ``prod``); the first part of every physical name.
        environment: ``dev`` or ``prod``; prod turns on deletion protection and retention.
        system: System key (``dm``, ``ler``...), tagged on everything.
        region: The system's region.
        account_id: The account, from ``aws.get_caller_identity``.
        partition: ``aws`` unless in GovCloud or China.
        provider: The explicit provider for ``region``; children inherit it from their parents.
        powertools_layer_arn: Powertools for AWS Lambda layer for python3.14 arm64 in ``region``.
        mail: The region's SES sending identities (shared by the systems in the region).
        tags: Extra tags for every resource.
        monitoring: The region's alert topic, the metrics namespace, tracing, and the registry
            the dashboard is drawn from.
        secret_store: ``secretsmanager`` or ``ssm`` (Parameter Store SecureString), from the
            stack's ``secretStore``.
        queue_triggers: ``on``, or ``paused``: SQS event source mappings declared disabled
            (``queueTriggers``, a developer's stack).
        permissions_boundary: The boundary policy ARN every role carries, or None
            (``permissionsBoundary``).
        public_concurrency: Reserved concurrency of each function behind a public Function
            URL (``publicConcurrency``); None for none.
        alert_email: ``alertEmail``, the person who deployed the stack: a function mails it
            what only they can fix (a model refused), never the owner.
    """

    prefix: str
    environment: str
    system: str
    region: str
    account_id: str
    partition: str
    provider: aws.Provider | None
    powertools_layer_arn: str
    mail: MailIdentities | None = field(default=None, compare=False)
    tags: dict[str, str] = field(default_factory=dict)
    monitoring: Monitoring = field(default_factory=Monitoring, compare=False)
    secret_store: str = "secretsmanager"
    queue_triggers: str = "on"
    permissions_boundary: str | None = None
    public_concurrency: int | None = None
    alert_email: str = ""

    @property
    def arns(self) -> Arns:
        return Arns(self.partition, self.region, self.account_id)

    @property
    def protect_data(self) -> bool:
        return self.environment == "prod"

    def name(self, seed: str) -> str:
        """The physical name for a document's resource name: ``dev`` + ``dm-block``."""
        return f"{self.prefix}-{seed}"

    def resource_tags(self, **extra: str) -> dict[str, str]:
        return {
            "crm:stack": self.prefix,
            "crm:system": self.system,
            **self.tags,
            **extra,
        }

    def grant_send_email(self, sid: str, sender: str) -> Grant:
        """SendEmail from ``sender`` only, handed out by the region's mail identity."""
        if self.mail is None:
            raise ValueError("this deployment has no mail identities registry")
        return self.mail.grant_send(sid, sender)

    def watch_unconfirmed_sends(
        self, metric: str, description: str, parent: pulumi.Resource
    ) -> aws.cloudwatch.MetricAlarm | None:
        """The system's ``unconfirmed-send`` alarm: its sweep counted a message to a customer
        claimed and never confirmed sent (``metric``), which a person must look at."""
        return declare_alarm(
            f"{self.system}-unconfirmed-send-alarm",
            self.name(f"{self.system}-unconfirmed-send"),
            unconfirmed_sends(self.monitoring.namespace, self.system, metric),
            description,
            self.monitoring,
            self.resource_tags(),
            parent,
        )

    def watch_spend_caps(self, parent: pulumi.Resource) -> aws.cloudwatch.MetricAlarm | None:
        """The system's ``spend-cap`` alarm: a daily cap on its paid calls was reached (once
        per cap and day, handlers/common/spend.py), emailed to the alert topic."""
        return declare_alarm(
            f"{self.system}-spend-cap-alarm",
            self.name(f"{self.system}-spend-cap"),
            spend_cap(self.monitoring.namespace, self.system),
            f"a daily spend cap of {self.system} reached: work takes the rules path or waits a day",
            self.monitoring,
            self.resource_tags(),
            parent,
        )

    def watch_degradations(self, parent: pulumi.Resource) -> aws.cloudwatch.MetricAlarm | None:
        """The system's one ``degraded`` alarm: any fallback of handlers/common/metrics.py's
        ``DEGRADATIONS`` taken by one of its functions (counted as ``Degraded``); the
        dashboard draws the system's degradations."""
        if self.system not in self.monitoring.registry.degradable:
            self.monitoring.registry.degradable.append(self.system)
        return declare_alarm(
            f"{self.system}-degraded-alarm",
            self.name(f"{self.system}-degraded"),
            degraded(self.monitoring.namespace, self.system),
            f"fallbacks taken in {self.system}",
            self.monitoring,
            self.resource_tags(),
            parent,
        )
