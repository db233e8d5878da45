"""SES sending identities, one per domain and region, shared by the systems that send.

Several systems in one region may send from the same domain; declaring the identity twice
would fail at ``pulumi up``, so the stack keeps one registry per region and every system asks
it for the identity ARN its SendEmail grant names.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.arns import Arns


class MailIdentities:
    """Creates each domain identity once (DKIM on) and returns ARNs for grants."""

    def __init__(self, arns: Arns, provider: pulumi.ProviderResource | None, prefix: str) -> None:
        self._arns = arns
        self._provider = provider
        self._prefix = prefix
        self._made: dict[str, aws.sesv2.EmailIdentity] = {}

    def identity_arn(self, address: str) -> str:
        """The ARN of the sending identity for ``address`` (its domain), declared on first use."""
        domain = address.rpartition("@")[2].lower()
        if not domain or "." not in domain:
            raise ValueError(f"{address!r} has no sending domain")
        if domain not in self._made:
            self._made[domain] = aws.sesv2.EmailIdentity(
                f"{self._prefix}-{self._arns.region}-{domain}",
                email_identity=domain,
                dkim_signing_attributes=aws.sesv2.EmailIdentityDkimSigningAttributesArgs(
                    next_signing_key_length="RSA_2048_BIT"
                ),
                opts=pulumi.ResourceOptions(provider=self._provider),
            )
        return self._arns.ses_identity(domain)

    def dkim_tokens(self) -> dict[str, pulumi.Output[list[str]]]:
        """CNAME tokens to publish in DNS, per domain."""
        return {
            domain: identity.dkim_signing_attributes.apply(
                lambda a: list(a.tokens or []) if a else []
            )
            for domain, identity in self._made.items()
        }
