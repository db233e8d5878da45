"""The one email check every system uses: syntax by email-validator, no DNS.

email-validator (https://github.com/JoshData/python-email-validator) checks the syntax of
addresses as today's mail systems accept them, without DNS (``check_deliverability=False``,
so dnspython is never imported): no leading, trailing or doubled dot in the mailbox, no hyphen
at either end of a domain label, a domain with a dot and no special-use name (``.test``,
``.invalid``, ``localhost``), no quoted mailboxes or IP literals, ASCII mailboxes only (SES
does not take SMTPUTF8), the length limits. The comparable form is the ASCII address (an
internationalised domain in punycode) in lower case: the systems key opt-outs, hashes and
identities on it.
"""

from __future__ import annotations

from functools import lru_cache

from handlers.common import cold_path


@lru_cache(maxsize=10_000)
def normalise_email(raw: str) -> str | None:
    """The address trimmed and lower-cased when its syntax is valid; None otherwise.

    A ``mailto:`` prefix and surrounding angle brackets are dropped first (forms and CRMs
    paste them); a display name or a list of addresses is not an address.
    """
    email_validator = cold_path.load("email_validator")
    value = raw.strip()
    if value[:7].lower() == "mailto:":
        value = value[7:]
    value = value.strip().removeprefix("<").removesuffix(">").strip()
    if not value or len(value) > 254:
        return None
    try:
        checked = email_validator.validate_email(value, check_deliverability=False, allow_smtputf8=False)
    except email_validator.EmailNotValidError:
        return None
    return str(checked.ascii_email or checked.normalized).lower()


def is_email(value: object) -> bool:
    """Whether ``value`` is a string holding one valid address."""
    return isinstance(value, str) and normalise_email(value) is not None

