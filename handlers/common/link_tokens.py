"""Signed link tokens: one subject, one action, an expiry, a key id; single use on demand.

A token is ``v1.<kid>.<payload>.<mac>``, every part URL-safe base64 or ``[A-Za-z0-9_-]``, so it
drops into a query string or an SMS unescaped. ``payload`` is compact JSON
``{"a": action, "e": expires_at, "i": issued_at, "j": token_id, "s": subject}`` and ``mac`` is
HMAC-SHA256 over ``v1.<kid>.<payload>`` with the keyring's secret for ``kid``.

Keys rotate by adding a new kid to the keyring and making it active: tokens signed with the old
kid keep verifying until it is removed. The keyring lives in one Secrets Manager secret as JSON
``{"active_kid": "k2", "keys": {"k1": "<secret>", "k2": "<secret>"}}``; each secret string is
used as UTF-8 bytes and must be at least 32 characters.

Verification checks the MAC before it parses the payload, so nothing an attacker controls is
interpreted until it is known to be ours. An authentic token is then checked against the clock
both ways: past its expiry it is refused, and so is one issued more than ``MAX_CLOCK_SKEW_S``
in the future (only a wrong clock at the issuer or a leaked key makes one), or one whose expiry
is not after its issue. Single use is separate (``consume_once``): a
conditional put of the token id with a TTL at the token's expiry. DynamoDB's lazy TTL deletion
is harmless because the token has expired by then anyway.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from handlers.common.transitions import put_if_absent

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

_VERSION = "v1"
_KID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_B64 = re.compile(r"^[A-Za-z0-9_-]+$")
MIN_KEY_BYTES = 32
MAX_TOKEN_CHARS = 2048
MAX_CLOCK_SKEW_S = 300
"""How far in the future a token's issued-at may lie: issuer and verifier are this program's
functions on Lambda, whose clocks are NTP-synchronised (Amazon Time Sync Service) to well under a
second, so five minutes covers any honest drift and nothing more."""


class TokenFailure(StrEnum):
    """Why a token was refused."""

    MALFORMED = "malformed"
    UNKNOWN_KEY = "unknown_key"
    BAD_SIGNATURE = "bad_signature"
    EXPIRED = "expired"
    NOT_YET_VALID = "not_yet_valid"
    WRONG_ACTION = "wrong_action"
    WRONG_SUBJECT = "wrong_subject"


class TokenError(Exception):
    """A link token that must not be acted on; ``reason`` says why."""

    reason: TokenFailure = TokenFailure.MALFORMED

    def __init__(self, detail: str) -> None:
        super().__init__(f"token {self.reason.value}: {detail}")
        self.detail = detail


class MalformedToken(TokenError):
    """Not a token of this format at all."""

    reason = TokenFailure.MALFORMED


class UnknownKey(TokenError):
    """Signed with a key id the keyring does not hold (never ours, or rotated out)."""

    reason = TokenFailure.UNKNOWN_KEY


class InvalidSignature(TokenError):
    """The MAC does not match: tampered, or signed with another secret under the same kid."""

    reason = TokenFailure.BAD_SIGNATURE


class TokenExpired(TokenError):
    """Authentic but past its expiry."""

    reason = TokenFailure.EXPIRED


class TokenNotYetValid(TokenError):
    """Authentic but issued in the future, beyond the clock skew allowed."""

    reason = TokenFailure.NOT_YET_VALID


class WrongAction(TokenError):
    """Authentic but issued for another action (a reject link used to confirm)."""

    reason = TokenFailure.WRONG_ACTION


class WrongSubject(TokenError):
    """Authentic but issued for another subject than the one the request names."""

    reason = TokenFailure.WRONG_SUBJECT


class TokenUse(StrEnum):
    """Outcome of ``consume_once``: both are normal answers."""

    FIRST_USE = "first_use"
    ALREADY_USED = "already_used"


@dataclass(frozen=True)
class LinkClaims:
    """What a verified token says. Times are unix seconds."""

    token_id: str
    subject: str
    action: str
    issued_at: int
    expires_at: int
    kid: str


@dataclass(frozen=True)
class Keyring:
    """Signing secrets by key id; ``active_kid`` signs, every kid present verifies."""

    keys: Mapping[str, bytes] = field(repr=False)
    active_kid: str

    def __post_init__(self) -> None:
        if not self.keys:
            raise ValueError("a keyring needs at least one key")
        for kid, secret in self.keys.items():
            if not _KID.match(kid):
                raise ValueError(f"key id {kid!r} must match {_KID.pattern}")
            if len(secret) < MIN_KEY_BYTES:
                raise ValueError(f"key {kid!r} is shorter than {MIN_KEY_BYTES} bytes")
        if self.active_kid not in self.keys:
            raise ValueError(f"active key id {self.active_kid!r} is not in the keyring")
        object.__setattr__(self, "keys", dict(self.keys))

    @classmethod
    def single(cls, kid: str, secret: bytes | str) -> Keyring:
        """A keyring with one key, active."""
        key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
        return cls(keys={kid: key}, active_kid=kid)

    @classmethod
    def from_secret_string(cls, value: str) -> Keyring:
        """Parse the Secrets Manager JSON ``{"active_kid": ..., "keys": {kid: secret}}``."""
        try:
            data = json.loads(value)
            keys = {str(k): str(v).encode("utf-8") for k, v in dict(data["keys"]).items()}
            active = str(data["active_kid"])
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(
                'keyring secret must be JSON {"active_kid": ..., "keys": {kid: secret}}'
            ) from err
        return cls(keys=keys, active_kid=active)


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if not _B64.match(text):
        raise MalformedToken("part is not URL-safe base64")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as err:
        raise MalformedToken("part is not URL-safe base64") from err


def _mac(secret: bytes, signed: str) -> bytes:
    return hmac.new(secret, signed.encode("ascii"), hashlib.sha256).digest()


def issue_token(
    keyring: Keyring,
    *,
    subject: str,
    action: str,
    ttl_seconds: int,
    now: float,
    token_id: str | None = None,
) -> str:
    """A token for ``action`` on ``subject`` valid ``ttl_seconds`` from ``now``, signed by the active key."""
    if not subject or not action:
        raise ValueError("a token needs a subject and an action")
    if ttl_seconds <= 0:
        raise ValueError("ttl_seconds must be positive")
    issued = int(now)
    claims = {
        "a": action,
        "e": issued + int(ttl_seconds),
        "i": issued,
        "j": token_id or secrets.token_urlsafe(12),
        "s": subject,
    }
    payload = _b64encode(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode("utf-8"))
    kid = keyring.active_kid
    signed = f"{_VERSION}.{kid}.{payload}"
    return f"{signed}.{_b64encode(_mac(keyring.keys[kid], signed))}"


def verify_token(
    token: str | None,
    keyring: Keyring,
    *,
    action: str,
    subject: str | None = None,
    now: float,
) -> LinkClaims:
    """The claims of an authentic, unexpired token for ``action`` (and ``subject`` if given).

    Raises a ``TokenError`` subclass otherwise. It does not consume the token: call
    ``consume_once`` when the action must happen at most once.
    """
    if not token or len(token) > MAX_TOKEN_CHARS:
        raise MalformedToken("empty or oversized token")
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != _VERSION:
        raise MalformedToken("not a v1 token")
    _, kid, payload, mac = parts
    if not _KID.match(kid):
        raise MalformedToken("bad key id")
    secret = keyring.keys.get(kid)
    if secret is None:
        raise UnknownKey(f"key id {kid!r} is not in the keyring")
    if not _B64.match(payload):
        raise MalformedToken("payload is not URL-safe base64")
    if not hmac.compare_digest(_mac(secret, f"{_VERSION}.{kid}.{payload}"), _b64decode(mac)):
        raise InvalidSignature("the signature does not match")
    try:
        data: Any = json.loads(_b64decode(payload))
        claims = LinkClaims(
            token_id=_text(data["j"]),
            subject=_text(data["s"]),
            action=_text(data["a"]),
            issued_at=_integer(data["i"]),
            expires_at=_integer(data["e"]),
            kid=kid,
        )
    except (ValueError, KeyError, TypeError) as err:
        raise MalformedToken("payload is not a claim set") from err
    if claims.expires_at <= claims.issued_at:
        raise MalformedToken("expires before it was issued")
    current = now
    if current >= claims.expires_at:
        raise TokenExpired(f"expired at {claims.expires_at}")
    if claims.issued_at > current + MAX_CLOCK_SKEW_S:
        raise TokenNotYetValid(f"issued at {claims.issued_at}, beyond the allowed clock skew")
    if not hmac.compare_digest(claims.action.encode(), action.encode()):
        raise WrongAction(f"issued for {claims.action!r}, used for {action!r}")
    if subject is not None and not hmac.compare_digest(claims.subject.encode(), subject.encode()):
        raise WrongSubject("issued for another subject")
    return claims


def _text(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError("expected a non-empty string")
    return value


def _integer(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("expected an integer")
    return value


def consume_once(
    table: Table,
    token_id: str,
    expires_at: int,
    *,
    key_attr: str = "token_id",
    ttl_attr: str = "expires_at",
    now: float,
) -> TokenUse:
    """Record that ``token_id`` was used; the second use reports ``ALREADY_USED``.

    The table's partition key is ``key_attr`` and its TTL attribute ``ttl_attr`` (unix seconds);
    the marker expires with the token, so the table never grows beyond live tokens.
    """
    item = {
        key_attr: token_id,
        ttl_attr: int(expires_at),
        "used_at": int(now),
    }
    result = put_if_absent(table, item, key_attr)
    return TokenUse.FIRST_USE if result.won else TokenUse.ALREADY_USED


# Short tokens: a signed link inside one SMS ------------------------------------------------

SHORT_MAC_BYTES = 10
"""80 bits: the shortest HMAC truncation RFC 2104 (section 5) recommends."""
MAX_SHORT_TTL_S = 2**24 - 1
"""The longest a short token lives (194 days; upsr's attribution window is 30 days at most)."""
SHORT_EPOCH = 1_704_067_200
"""2024-01-01 UTC: a short token's expiry is counted from here in 30 bits (to 2058)."""
_EXPIRY_BITS = 30
_FORM_NUMBER = 0b10
_FORM_TEXT = 0b11
_FORM_S1 = 0b01
"""Tokens issued before the compact form begin with their 4-byte expiry in unix seconds, whose
top two bits are 01 for any expiry from 2004 to 2038: the form is the first two bits."""
_S1_NUMBER = 0


def issue_short_token(
    keyring: Keyring, *, subject: str, action: str, ttl_seconds: int, now: float
) -> str:
    """A token for a link that must fit an SMS: ``<kid>.<body>``, 30 characters for a 13-digit
    subject (an order number) where ``issue_token`` takes over 150.

    ``body`` is URL-safe base64 of 4 bytes (2 bits of form: the subject is a decimal number or
    UTF-8 text; 30 bits of expiry, seconds after ``SHORT_EPOCH``), the subject (a decimal
    number packed as an integer, any other text as UTF-8) and an HMAC-SHA256 truncated to 80
    bits over ``s2.<kid>.<action>.`` and those bytes: the action is signed but not carried.
    It carries no issue time (that took 3 more bytes and made upsr's link 104 characters): an
    expiry further ahead than ``MAX_SHORT_TTL_S`` is refused instead. A short token has no id,
    so it is not for single-use links (``consume_once``).
    """
    if not subject or not action:
        raise ValueError("a token needs a subject and an action")
    if not 0 < ttl_seconds <= MAX_SHORT_TTL_S:
        raise ValueError(f"ttl_seconds must be positive and at most {MAX_SHORT_TTL_S}")
    offset = int(now) + int(ttl_seconds) - SHORT_EPOCH
    if not 0 < offset < 2**_EXPIRY_BITS:
        raise ValueError("a short token's expiry must lie between 2024 and 2058")
    if subject.isascii() and subject.isdigit() and not subject.startswith("0"):
        number = int(subject)
        form, encoded = _FORM_NUMBER, number.to_bytes(max(1, (number.bit_length() + 7) // 8))
    else:
        form, encoded = _FORM_TEXT, subject.encode("utf-8")
    body = (form << _EXPIRY_BITS | offset).to_bytes(4) + encoded
    kid = keyring.active_kid
    return f"{kid}.{_b64encode(body + _short_mac(keyring.keys[kid], 's2', kid, action, body))}"


def _short_mac(secret: bytes, form: str, kid: str, action: str, body: bytes) -> bytes:
    signed = f"{form}.{kid}.{action}.".encode() + body
    return hmac.new(secret, signed, hashlib.sha256).digest()[:SHORT_MAC_BYTES]


def verify_short_token(
    token: str | None, keyring: Keyring, *, action: str, now: float
) -> LinkClaims:
    """The claims of an authentic, unexpired short token for ``action``; a ``TokenError``
    otherwise (a token for another action fails its MAC: ``InvalidSignature``).

    Both forms are read: the compact one ``issue_short_token`` gives, and the one before it
    (expiry, lifetime, subject kind; at most ``MAX_SHORT_TTL_S`` old, so links already sent
    keep working until they expire). A compact token's ``issued_at`` is 0: it carries none."""
    if not token or len(token) > 200:
        raise MalformedToken("empty or oversized token")
    kid, dot, rest = token.partition(".")
    if not dot or not _KID.match(kid):
        raise MalformedToken("not a short token")
    raw = _b64decode(rest)
    if len(raw) < 4 + 1 + SHORT_MAC_BYTES:
        raise MalformedToken("short token too short")
    secret = keyring.keys.get(kid)
    if secret is None:
        raise UnknownKey(f"key id {kid!r} is not in the keyring")
    body, mac = raw[:-SHORT_MAC_BYTES], raw[-SHORT_MAC_BYTES:]
    form = body[0] >> 6
    if form == _FORM_S1:
        return _verify_s1(secret, kid, action, body, mac, now)
    if form not in (_FORM_NUMBER, _FORM_TEXT):
        raise MalformedToken("not a short token")
    if not hmac.compare_digest(_short_mac(secret, "s2", kid, action, body), mac):
        raise InvalidSignature("the signature does not match")
    expires = SHORT_EPOCH + (int.from_bytes(body[:4]) & (2**_EXPIRY_BITS - 1))
    subject = _short_subject(form == _FORM_NUMBER, body[4:])
    if now >= expires:
        raise TokenExpired(f"expired at {expires}")
    if expires > now + MAX_SHORT_TTL_S + MAX_CLOCK_SKEW_S:  # no issuer gives a longer life
        raise TokenNotYetValid(f"expires at {expires}, beyond the longest lifetime")
    return LinkClaims(token_id="", subject=subject, action=action, issued_at=0, expires_at=expires, kid=kid)


def _short_subject(number: bool, value: bytes) -> str:
    if number:
        return str(int.from_bytes(value))
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as err:
        raise MalformedToken("subject is not UTF-8") from err


def _verify_s1(secret: bytes, kid: str, action: str, body: bytes, mac: bytes, now: float) -> LinkClaims:
    """The form sent before the compact one: expiry (4 bytes), lifetime (3), kind (1), subject."""
    if len(body) < 4 + 3 + 2:
        raise MalformedToken("short token too short")
    if not hmac.compare_digest(_short_mac(secret, "s1", kid, action, body), mac):
        raise InvalidSignature("the signature does not match")
    expires, lifetime = int.from_bytes(body[:4]), int.from_bytes(body[4:7])
    subject = _short_subject(body[7] == _S1_NUMBER, body[8:])
    issued = expires - lifetime
    if lifetime <= 0:
        raise MalformedToken("expires before it was issued")
    if now >= expires:
        raise TokenExpired(f"expired at {expires}")
    if issued > now + MAX_CLOCK_SKEW_S:  # the rule of ``verify_token``
        raise TokenNotYetValid(f"issued at {issued}, beyond the allowed clock skew")
    return LinkClaims(token_id="", subject=subject, action=action, issued_at=issued, expires_at=expires, kid=kid)
