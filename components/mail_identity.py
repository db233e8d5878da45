"""SES sending identities, one per domain and region, shared by the systems that send.

Several systems in one region may send from the same domain; declaring the identity twice
would fail at ``pulumi up``, so the stack keeps one registry per region and every system asks
it for the identity ARN its SendEmail grant names.

An identity is also unique per account and region ("CreateEmailIdentity": a second create
answers ``AlreadyExistsException``; SES API Reference v2,
https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_CreateEmailIdentity.html), and dev
and prod share one account. So exactly one stack owns the identities (``mailIdentityOwner:
true``, prod): it declares them and publishes their DKIM tokens. The other stack only
references them: its SendEmail grants name the same identity ARNs, which the owner's identity
verifies for the whole account ("Verified identities in Amazon SES", SES developer guide,
https://docs.aws.amazon.com/ses/latest/dg/verify-addresses-and-domains.html).
``components/offline/two_stacks.py`` proves that no identity is declared twice and that every
referenced identity is declared by a stack.

A system gets its SendEmail permission only from here (:meth:`MailIdentities.grant_send`): one
statement shape for every sender in every system.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.arns import Arns
from components.grants import Grant


class MailIdentities:
    """Creates each domain identity once (DKIM on), or only references it; returns ARNs."""

    def __init__(
        self,
        arns: Arns,
        provider: pulumi.ProviderResource | None,
        prefix: str,
        owner: bool = True,
    ) -> None:
        self._arns = arns
        self._provider = provider
        self._prefix = prefix
        self._owner = owner
        self._made: dict[str, aws.sesv2.EmailIdentity] = {}
        self._referenced: set[str] = set()

    def identity_arn(self, address: str) -> str:
        """The ARN of the sending identity for ``address`` (its domain), declared on first use
        when this stack owns the identities, otherwise only referenced."""
        domain = address.rpartition("@")[2].lower()
        if not domain or "." not in domain:
            raise ValueError(f"{address!r} has no sending domain")
        if not self._owner:
            self._referenced.add(domain)
        elif domain not in self._made:
            self._made[domain] = aws.sesv2.EmailIdentity(
                f"{self._prefix}-{self._arns.region}-{domain}",
                email_identity=domain,
                dkim_signing_attributes=aws.sesv2.EmailIdentityDkimSigningAttributesArgs(
                    next_signing_key_length="RSA_2048_BIT"
                ),
                opts=pulumi.ResourceOptions(provider=self._provider),
            )
        return self._arns.ses_identity(domain)

    def grant_send(self, sid: str, sender: str) -> Grant:
        """SendEmail on ``sender``'s identity (its whole domain), as that one From address only.

        ``ses:FromAddress`` is the condition key SES documents for the From address ("Identity and
        access management in Amazon SES", SES developer guide,
        https://docs.aws.amazon.com/ses/latest/dg/control-user-access.html).
        """
        return Grant(
            sid,
            ("ses:SendEmail",),
            (self.identity_arn(sender),),
            {"StringEquals": {"ses:FromAddress": [sender]}},
        )

    def referenced(self) -> list[str]:
        """Domains this stack sends from but does not declare (the owner stack declares them)."""
        return sorted(self._referenced)

    def dkim_tokens(self) -> dict[str, pulumi.Output[list[str]]]:
        """CNAME tokens to publish in DNS, per domain."""
        return {
            domain: identity.dkim_signing_attributes.apply(
                lambda a: list(a.tokens or []) if a else []
            )
            for domain, identity in self._made.items()
        }
