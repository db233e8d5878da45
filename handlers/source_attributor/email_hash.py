"""The keyed email hash: how an enquiry names a person without storing their email.

A plain SHA-256 of an email is reversible by anyone with a list of addresses (emails are
guessable), so the hash is HMAC-SHA256 under a key held in one Secrets Manager secret that
only ls-capture may read. Stitching and reporting only compare hashes, so they never need it.
The key must not change casually: a new key gives every person a new hash, and enquiries
hashed under different keys no longer stitch together.
"""

from __future__ import annotations

import hashlib
import hmac

from handlers.common import emails

MIN_KEY_BYTES = 32
MAX_EMAIL = 254


def normalise_email(raw: str) -> str:
    """The comparable form of an address (the shared check: trimmed, lower-cased);
    ValueError if not an email."""
    email = emails.normalise_email(raw)
    if email is None:
        raise ValueError("not an email address")
    return email


def email_hash(raw_email: str, key: bytes) -> str:
    """HMAC-SHA256 of the normalised address under ``key``, lower-case hex."""
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"the email hash key must be at least {MIN_KEY_BYTES} bytes")
    return hmac.new(key, normalise_email(raw_email).encode("utf-8"), hashlib.sha256).hexdigest()
