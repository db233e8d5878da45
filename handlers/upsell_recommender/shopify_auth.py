"""Admin API access tokens for the store: the client-credentials grant, cached per container.

Since 1 January 2026 new custom apps are made in Shopify's Dev Dashboard, not in the store's
admin, and such an app gets its Admin API token by the client-credentials grant:

- "Using the client credentials grant",
  https://shopify.dev/docs/apps/build/authentication-authorization/access-tokens/client-credentials-grant
  (an app developed by your own organization, installed in a store you own, exchanges its
  client ID and secret for a token; "Step 3: Refresh the access token").
- "About client credentials", https://shopify.dev/docs/apps/build/authentication-authorization/client-secrets
  ``POST https://{shop}.myshopify.com/admin/oauth/access_token``, form-encoded
  ``grant_type=client_credentials&client_id=...&client_secret=...``; the answer is
  ``{"access_token": "shpat_...", "scope": "...", "expires_in": ...}`` and the token lives
  24 hours (``expires_in`` 86399 in practice). The same client secret signs the webhooks.
- RFC 6749 section 4.4 (client credentials) and 5.2 (error answer ``{"error": ...,
  "error_description": ...}``).

``upsr-store-key`` holds either ``{"client_id": "...", "client_secret": "..."}`` (a Dev
Dashboard app: tokens are minted here and kept until ``refresh_margin_s`` before their
expiry) or, for a store whose admin-created custom app predates 2026, the legacy static
Admin API token (``shpat_...``, plain or as ``{"access_token": "..."}``), used as is.
``invalidate()`` after a 401 forgets the token and the cached secret, so the next call mints
a fresh token with whatever the secret now holds.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from handlers.upsell_recommender.store import StoreAuthError, StoreError, shop_domain

Opener = Callable[[urllib.request.Request, float], Any]

DEFAULT_LIFETIME_S = 3600.0
"""Kept for a token whose answer carries no ``expires_in`` (Shopify's own say 24 hours)."""


def _urlopen(request: urllib.request.Request, timeout: float) -> Any:
    # The URL is always https://<checked shop>.myshopify.com/admin/oauth/access_token.
    return urllib.request.urlopen(request, timeout=timeout)  # noqa: S310


@dataclass(frozen=True)
class StoreCredentials:
    """What ``upsr-store-key`` holds: an app's client credentials, or a legacy static token."""

    client_id: str | None = None
    client_secret: str | None = None
    static_token: str | None = None

    @property
    def grant(self) -> bool:
        return self.static_token is None


def parse_store_secret(text: str) -> StoreCredentials:
    """The credentials in the secret's value; StoreError naming the expected shapes otherwise."""
    value = text.strip()
    if not value:
        raise StoreError("upsr-store-key is empty")
    if not value.startswith("{"):
        return StoreCredentials(static_token=value)  # legacy admin-created app token
    try:
        data = json.loads(value)
    except ValueError:
        raise StoreError("upsr-store-key starts with '{' but is not JSON") from None
    client_id, client_secret = data.get("client_id"), data.get("client_secret")
    if isinstance(client_id, str) and client_id and isinstance(client_secret, str) and client_secret:
        return StoreCredentials(client_id=client_id.strip(), client_secret=client_secret.strip())
    token = data.get("access_token")
    if isinstance(token, str) and token.strip():
        return StoreCredentials(static_token=token.strip())
    raise StoreError(
        'upsr-store-key must be {"client_id": ..., "client_secret": ...} (a Dev Dashboard app) '
        "or a legacy Admin API token"
    )


def webhook_key(text: str) -> str:
    """The key Shopify signs webhooks with: the app's client secret.

    ``upsr-webhook-secret`` may hold it as a plain string, or hold the same
    ``{"client_id", "client_secret"}`` JSON as ``upsr-store-key`` (one value to paste into both).
    "About client credentials", https://shopify.dev/docs/apps/build/authentication-authorization/client-secrets
    (the client secret verifies "that a webhook request is genuinely from Shopify":
    ``X-Shopify-Hmac-Sha256`` is the base64 HMAC-SHA256 of the raw body, checked by
    ``handlers.common.webhook_signatures.verify_base64_hmac``).
    """
    value = text.strip()
    if value.startswith("{"):
        try:
            secret = json.loads(value).get("client_secret")
        except (ValueError, AttributeError):
            secret = None
        if not isinstance(secret, str) or not secret:
            raise StoreError("upsr-webhook-secret is JSON without a client_secret")
        return secret.strip()
    return value


class AccessTokens:
    """One store's Admin API token, minted by the client-credentials grant and cached."""

    def __init__(
        self,
        domain: str,
        secret: Callable[[], str],
        *,
        forget_secret: Callable[[], None] | None = None,
        opener: Opener = _urlopen,
        clock: Callable[[], float],
        refresh_margin_s: float = 300.0,
        timeout_s: float = 10.0,
    ) -> None:
        self.domain = shop_domain(domain)
        self._secret = secret
        self._forget_secret = forget_secret
        self._open = opener
        self._clock = clock
        self._margin = refresh_margin_s
        self._timeout = timeout_s
        self._token: str | None = None
        self._expires_at = 0.0
        self.grants = 0
        """Tokens minted by this container (the contract tests count them)."""

    def token(self) -> str:
        """A token valid for at least ``refresh_margin_s`` more seconds."""
        if self._token is not None and self._clock() < self._expires_at - self._margin:
            return self._token
        credentials = parse_store_secret(self._secret())
        if not credentials.grant:
            assert credentials.static_token is not None
            return credentials.static_token
        self._token, self._expires_at = self._mint(credentials)
        return self._token

    def invalidate(self) -> None:
        """Forget the token and the cached secret (the store refused the token)."""
        self._token, self._expires_at = None, 0.0
        if self._forget_secret is not None:
            self._forget_secret()

    def _mint(self, credentials: StoreCredentials) -> tuple[str, float]:
        assert credentials.client_id and credentials.client_secret
        body = urllib.parse.urlencode(
            {
                "grant_type": "client_credentials",
                "client_id": credentials.client_id,
                "client_secret": credentials.client_secret,
            }
        ).encode("ascii")
        # Only https://<checked shop domain>/admin/oauth/access_token is ever called.
        request = urllib.request.Request(
            f"https://{self.domain}/admin/oauth/access_token",
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
        )
        asked_at = self._clock()
        try:
            with self._open(request, self._timeout) as response:
                status, raw = int(getattr(response, "status", 200)), response.read()
        except urllib.error.HTTPError as err:
            status, raw = err.code, err.read() or b""
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise StoreError(f"Shopify token endpoint unreachable: {err}") from err
        try:
            answer = json.loads(raw) if raw else {}
        except ValueError:
            answer = {}
        if status != 200:
            error = answer.get("error") if isinstance(answer, dict) else None
            detail = answer.get("error_description") if isinstance(answer, dict) else None
            raise StoreAuthError(
                f"Shopify refused the client credentials (HTTP {status}"
                + (f" {error}" if error else "")
                + (f": {str(detail)[:200]}" if detail else "")
                + ")"
            )
        token = answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(token, str) or not token:
            raise StoreError("Shopify's token answer carries no access_token")
        try:
            lifetime = float(answer.get("expires_in", DEFAULT_LIFETIME_S))
        except (TypeError, ValueError):
            lifetime = DEFAULT_LIFETIME_S
        self.grants += 1
        return token, asked_at + lifetime
