"""Secrets fetched from Secrets Manager when needed, cached in the process for a short time.

The function's environment holds only a secret's name or ARN (``secret_id_from_env``), never
its value: values live in Secrets Manager, and the execution role may read exactly the secret
named. A warm container reuses a value for ``ttl_seconds`` (300 s by default) and then fetches
it again, so a rotated secret reaches every function within that time without a redeploy.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from handlers.common.aws_clients import client

DEFAULT_TTL_SECONDS = 300.0
SECRET_ID_PATTERN = re.compile(
    r"^(arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:)?[A-Za-z0-9/_+=.@-]{1,512}$"
)


class SecretError(Exception):
    """A secret that could not be read, or does not hold what the caller expects."""

    def __init__(self, secret_id: str, message: str) -> None:
        super().__init__(f"secret {secret_id!r}: {message}")
        self.secret_id = secret_id


class SecretsClient(Protocol):
    """The one method of a ``secretsmanager`` client this module calls."""

    def get_secret_value(self, *, SecretId: str) -> Mapping[str, Any]:
        """Secrets Manager GetSecretValue."""
        ...


@dataclass(frozen=True)
class _Entry:
    fetched_at: float
    text: str | None
    binary: bytes | None


def _default_client() -> SecretsClient:
    result: SecretsClient = client("secretsmanager")
    return result


class SecretCache:
    """A small TTL cache in front of GetSecretValue; thread-safe, one entry per secret id."""

    def __init__(
        self,
        *,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        client_factory: Callable[[], SecretsClient] = _default_client,
    ) -> None:
        if ttl_seconds < 0:
            raise ValueError("ttl_seconds must not be negative")
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._client_factory = client_factory
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def _entry(self, secret_id: str) -> _Entry:
        now = self._clock()
        with self._lock:
            entry = self._entries.get(secret_id)
            if entry is not None and now - entry.fetched_at < self.ttl_seconds:
                return entry
        entry = self._fetch(secret_id, now)
        with self._lock:
            self._entries[secret_id] = entry
        return entry

    def _fetch(self, secret_id: str, now: float) -> _Entry:
        from botocore.exceptions import ClientError

        try:
            answer = self._client_factory().get_secret_value(SecretId=secret_id)
        except ClientError as err:
            code = err.response.get("Error", {}).get("Code", "Unknown")
            raise SecretError(secret_id, f"GetSecretValue failed: {code}") from err
        text = answer.get("SecretString")
        binary = answer.get("SecretBinary")
        if text is None and binary is None:
            raise SecretError(secret_id, "has no value")
        return _Entry(
            fetched_at=now,
            text=None if text is None else str(text),
            binary=None if binary is None else bytes(binary),
        )

    def get_string(self, secret_id: str) -> str:
        """The secret's string value (a binary secret is decoded as UTF-8)."""
        entry = self._entry(secret_id)
        if entry.text is not None:
            return entry.text
        assert entry.binary is not None
        try:
            return entry.binary.decode("utf-8")
        except UnicodeDecodeError as err:
            raise SecretError(secret_id, "binary value is not UTF-8") from err

    def get_bytes(self, secret_id: str) -> bytes:
        """The secret's bytes (a string secret is encoded as UTF-8)."""
        entry = self._entry(secret_id)
        if entry.binary is not None:
            return entry.binary
        assert entry.text is not None
        return entry.text.encode("utf-8")

    def get_json(self, secret_id: str) -> dict[str, Any]:
        """The secret parsed as a JSON object."""
        try:
            value = json.loads(self.get_string(secret_id))
        except ValueError as err:
            raise SecretError(secret_id, "is not JSON") from err
        if not isinstance(value, dict):
            raise SecretError(secret_id, "is not a JSON object")
        return value

    def get_field(self, secret_id: str, field: str) -> str:
        """One string field of a JSON secret."""
        value = self.get_json(secret_id).get(field)
        if not isinstance(value, str) or not value:
            raise SecretError(secret_id, f"has no non-empty string field {field!r}")
        return value

    def invalidate(self, secret_id: str | None = None) -> None:
        """Forget one cached secret (e.g. after the API said the key is wrong), or all."""
        with self._lock:
            if secret_id is None:
                self._entries.clear()
            else:
                self._entries.pop(secret_id, None)


default_cache = SecretCache()
"""The process-wide cache the module-level helpers use; creating it makes no client."""


def secret_id_from_env(variable: str) -> str:
    """The secret NAME or ARN held by environment variable ``variable``.

    Refuses a value that cannot be a secret id (spaces, braces, quotes), which is what a value
    pasted by mistake in place of the name looks like.
    """
    value = os.environ.get(variable, "").strip()
    if not value:
        raise SecretError(
            variable, f"environment variable {variable} (a secret name or ARN) is not set"
        )
    if not SECRET_ID_PATTERN.match(value):
        raise SecretError(variable, f"{variable} must hold a secret name or ARN, not a value")
    return value


def get_secret(secret_id: str) -> str:
    """The string value of ``secret_id`` through the process-wide cache."""
    return default_cache.get_string(secret_id)


def get_secret_bytes(secret_id: str) -> bytes:
    """The bytes of ``secret_id`` through the process-wide cache."""
    return default_cache.get_bytes(secret_id)


def get_secret_field(secret_id: str, field: str) -> str:
    """One string field of the JSON secret ``secret_id`` through the process-wide cache."""
    return default_cache.get_field(secret_id, field)
