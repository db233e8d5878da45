"""How a system remembers a person it erased without keeping them: the salted hash of a contact.

``make forget`` and Shopify's customers/redact (handlers/common/privacy.py) leave, on the opt-out
table, ``forgotten#`` and the HMAC-SHA256 of each normalised email, E.164 phone or customer id
under the stack's salt secret; the handlers that check opt-outs look a contact up as itself and
as this hash. No address is stored, and without the salt a hash cannot be tested against a
list of guessed addresses. Kept apart from privacy.py so the checks import nothing else.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

from handlers.common.secrets import SecretError, SecretThrottled, get_secret

FORGOTTEN_PREFIX: Final = "forgotten#"
"""What a salted hash is stored under (an opt-out row's key), so it is never taken for a contact."""


def salted(normalised: str, salt: str) -> str:
    """``forgotten#`` and the hex HMAC-SHA256 of an already normalised contact (a lower-case
    email, an E.164 phone, a customer id) under ``salt``."""
    digest = hmac.new(salt.encode(), normalised.strip().lower().encode(), hashlib.sha256).hexdigest()
    return FORGOTTEN_PREFIX + digest


_NO_VALUE = ("has no value", "ResourceNotFoundException", "ParameterNotFound")
"""How handlers.common.secrets words a secret that holds no value yet (a new secret, an
unset parameter)."""


def stack_salt(secret_id: str) -> str | None:
    """The salt, or None while its secret holds no value yet (after an upgrade, before
    ``make secrets``): no hash can exist then, since an erasure writes them only with the salt
    (components/operate/forget.py). A throttle or a denied read still fails the call."""
    try:
        return get_secret(secret_id)
    except SecretThrottled:
        raise
    except SecretError as err:
        if any(marker in str(err) for marker in _NO_VALUE):
            return None
        raise
