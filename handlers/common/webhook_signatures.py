"""Webhook authenticity: HMAC-SHA256 over the raw body, compared in constant time.

Two forms cover the providers the systems talk to:

* ``base64`` (Shopify style): header ``X-Shopify-Hmac-Sha256`` holds
  ``base64(HMAC-SHA256(secret, raw_body))``. It carries no timestamp, so a replay inside the
  provider's own retry pattern is stopped by the caller's idempotency guard
  (``transitions.put_if_absent`` on the event id), not here.
* ``timestamped`` (Stripe style): header ``t=<unix>,v1=<hex>[,v1=<hex>...]`` where each ``v1`` is
  ``hex(HMAC-SHA256(secret, f"{t}.{raw_body}"))``. The signature binds the timestamp, and a
  timestamp outside the replay window is refused even when the signature is right.

Both verify the exact bytes received (``function_url.Request.body``), before anything parses
them. Every failure raises ``SignatureError`` with a ``failure`` code. A webhook function
describes its provider's signature once as a :class:`SignedWebhook`, whose ``refusal`` is the
one way to check a request and answer a failure (401, logged, never echoed).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from handlers.common.function_url import Request, json_error
from handlers.common.observability import get_logger

SHOPIFY_HMAC_HEADER = "X-Shopify-Hmac-Sha256"
DEFAULT_TOLERANCE_SECONDS = 300


class SignatureFailure(StrEnum):
    """Why a signature was refused; logged, never echoed in detail to the caller."""

    MISSING = "missing"
    MALFORMED = "malformed"
    MISMATCH = "mismatch"
    STALE = "stale"


class SignatureError(Exception):
    """The request is not authentic (or no longer fresh); nothing else may be read from it."""

    def __init__(self, failure: SignatureFailure, detail: str) -> None:
        super().__init__(f"signature {failure.value}: {detail}")
        self.failure = failure
        self.detail = detail


def _key(secret: bytes | str) -> bytes:
    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if not key:
        # An empty key would make every forged body "authentic" to anyone who knows the scheme.
        raise ValueError("the webhook signing secret is empty")
    return key


def _mac(secret: bytes | str, message: bytes) -> bytes:
    return hmac.new(_key(secret), message, hashlib.sha256).digest()


def sign_base64_hmac(body: bytes, secret: bytes | str) -> str:
    """The base64 HMAC-SHA256 header value a provider would send for ``body``."""
    return base64.b64encode(_mac(secret, body)).decode("ascii")


def verify_base64_hmac(body: bytes, signature: str | None, secret: bytes | str) -> None:
    """Raise ``SignatureError`` unless ``signature`` is the base64 HMAC-SHA256 of ``body``."""
    expected = _mac(secret, body)
    if signature is None or not signature.strip():
        raise SignatureError(SignatureFailure.MISSING, "no signature header")
    try:
        given = base64.b64decode(signature.strip().encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as err:
        raise SignatureError(SignatureFailure.MALFORMED, "signature is not base64") from err
    if not hmac.compare_digest(expected, given):
        raise SignatureError(SignatureFailure.MISMATCH, "body does not match the signature")


def _signed_payload(timestamp: int, body: bytes) -> bytes:
    return str(timestamp).encode("ascii") + b"." + body


def sign_timestamped(body: bytes, secret: bytes | str, timestamp: int) -> str:
    """The ``t=<unix>,v1=<hex>`` header value a provider would send for ``body`` at ``timestamp``."""
    digest = hmac.new(_key(secret), _signed_payload(timestamp, body), hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def _parse_timestamped(header: str) -> tuple[int, list[str]]:
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        name, sep, value = part.strip().partition("=")
        if not sep:
            continue
        if name == "t":
            if not value.isdigit() or len(value) > 12:
                raise SignatureError(SignatureFailure.MALFORMED, "timestamp is not a unix time")
            timestamp = int(value)
        elif name == "v1":
            candidates.append(value.strip().lower())
    if timestamp is None:
        raise SignatureError(SignatureFailure.MALFORMED, "no t= element")
    if not candidates:
        raise SignatureError(SignatureFailure.MALFORMED, "no v1= element")
    return timestamp, candidates


def verify_timestamped(
    body: bytes,
    header: str | None,
    secret: bytes | str,
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float,
) -> int:
    """Check a ``t=...,v1=...`` header over ``body``; return the signed unix timestamp.

    The signature is checked first, so a forger learns nothing from the window check; a right
    signature whose timestamp is more than ``tolerance_seconds`` from ``now`` (either side) is a
    replay or a badly skewed clock, and is refused as ``STALE``.
    """
    key = _key(secret)
    if header is None or not header.strip():
        raise SignatureError(SignatureFailure.MISSING, "no signature header")
    timestamp, candidates = _parse_timestamped(header)
    expected = hmac.new(key, _signed_payload(timestamp, body), hashlib.sha256).hexdigest()
    expected_bytes = expected.encode("ascii")
    # Several v1 values appear while the provider rolls its secret; any one may match.
    matched = False
    for candidate in candidates:
        matched |= hmac.compare_digest(expected_bytes, candidate.encode("utf-8"))
    if not matched:
        raise SignatureError(SignatureFailure.MISMATCH, "body does not match the signature")
    current = now
    if abs(current - timestamp) > tolerance_seconds:
        raise SignatureError(
            SignatureFailure.STALE,
            f"timestamp is {int(current - timestamp)} s from now, window is {tolerance_seconds} s",
        )
    return timestamp


@dataclass(frozen=True)
class SignedWebhook:
    """How one provider signs its webhook: the header, the form, and what a refused caller is
    told (the failure itself is only logged)."""

    header: str
    form: Literal["base64", "timestamped"]
    refused: str
    """The 401 message."""

    def refusal(self, request: Request, secret: bytes | str, *, now: float) -> dict[str, Any] | None:
        """None when ``request`` is authentic (and, timestamped, fresh at ``now``); else the
        401 answer."""
        signature = request.headers.get(self.header.lower())
        try:
            if self.form == "base64":
                verify_base64_hmac(request.body, signature, secret)
            else:
                verify_timestamped(request.body, signature, secret, now=now)
        except SignatureError as err:
            get_logger().warning("webhook signature refused", extra={"failure": err.failure.value})
            return json_error(401, "invalid_signature", self.refused)
        return None

