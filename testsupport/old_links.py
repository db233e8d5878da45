"""Short link tokens of the form sent before the compact one (``s1``), as upsr and rrs issued
them until #40: links already in customers' messages must keep working until they expire, so
the tests need one to tap. Production only reads this form (``link_tokens.verify_short_token``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from handlers.common.link_tokens import SHORT_MAC_BYTES, Keyring


def issue_s1_short_token(keyring: Keyring, *, subject: str, action: str, ttl_seconds: int, now: float) -> str:
    """``<kid>.<b64(expiry 4 bytes, lifetime 3, kind 1, subject, HMAC-SHA256[:10])>``, the MAC
    over ``s1.<kid>.<action>.`` and the bytes before it."""
    expires = int(now) + ttl_seconds
    if subject.isdigit() and not subject.startswith("0"):
        number = int(subject)
        encoded = bytes([0]) + number.to_bytes(max(1, (number.bit_length() + 7) // 8))
    else:
        encoded = bytes([1]) + subject.encode("utf-8")
    body = expires.to_bytes(4) + ttl_seconds.to_bytes(3) + encoded
    kid = keyring.active_kid
    mac = hmac.new(keyring.keys[kid], f"s1.{kid}.{action}.".encode() + body, hashlib.sha256).digest()
    return f"{kid}." + base64.urlsafe_b64encode(body + mac[:SHORT_MAC_BYTES]).rstrip(b"=").decode()
