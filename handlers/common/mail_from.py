"""The From a customer sees: "Business name <address>", not a bare mailbox.

SES takes a display name in RFC 5322 form in ``FromEmailAddress``, non-ASCII as an RFC 2047
encoded-word (SES v2 SendEmail, FromEmailAddress:
https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html); the address alone
is still what the role's ``ses:FromAddress`` condition and the SES identity are checked on.
Kept apart from ``emails`` so a sender does not import email-validator.
"""

from __future__ import annotations

from email.utils import formataddr


def from_address(name: str, address: str) -> str:
    """``Name <address>``; ``email.utils.formataddr`` quotes and encodes the name."""
    return formataddr((" ".join(name.split()), address))
