"""Secrets fetched when needed, cached in the process for a short time.

The function's environment holds only a secret's name or ARN (``secret_id_from_env``), never
its value: values live in Secrets Manager or, where the stack's ``secretStore`` is ``ssm``, in
Parameter Store SecureStrings, and the execution role may read exactly the secret named. A
parameter is told apart by its id: ``/<prefix>/<name>`` or an ``ssm`` ARN (a Secrets Manager
name of this project never starts with ``/``). Fetching and caching are Powertools
Parameters' ``SecretsProvider`` or ``SSMProvider`` (decrypted): a warm container
reuses a value for ``ttl_seconds`` (300 s) and then fetches it again, so a rotated secret
reaches every function within that time without a redeploy. This module adds what Powertools
does not say: which secret failed (:class:`SecretError`), and a refusal of an environment value
that is a pasted secret rather than its name.

Parameter Store's standard throughput is shared by every function of the account and region,
so a flood on one public surface can throttle another's secret read. The SDK's standard retry
mode already retries a throttled read with exponential back-off (``aws_clients``: three
attempts; Boto3 guide, "Retries":
https://docs.aws.amazon.com/boto3/latest/guide/retries.html); a read still throttled after
them is :class:`SecretThrottled`, which ``entry`` answers on a Function URL with 503 and
``Retry-After`` (the caller comes back) rather than a 500.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from handlers.common import cold_path
from handlers.common.aws_clients import client

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.parameters import SecretsProvider, SSMProvider

DEFAULT_TTL_SECONDS = 300
SECRET_ID_PATTERN = re.compile(
    r"^(arn:aws[a-z-]*:(secretsmanager:[a-z0-9-]+:\d{12}:secret:|ssm:[a-z0-9-]+:\d{12}:parameter))?"
    r"[A-Za-z0-9/_+=.@-]{1,512}$"
)
PARAMETER_PLACEHOLDER = "unset: make secrets sets this parameter"
"""What the program writes as version 1 of a parameter (components/secret_slot.py)."""


def is_parameter(secret_id: str) -> bool:
    """Whether ``secret_id`` names a Parameter Store parameter rather than a secret."""
    return secret_id.startswith("/") or re.match(r"^arn:aws[a-z-]*:ssm:", secret_id) is not None


class SecretError(Exception):
    """A secret that could not be read, or does not hold what the caller expects."""

    def __init__(self, secret_id: str, message: str) -> None:
        super().__init__(f"secret {secret_id!r}: {message}")
        self.secret_id = secret_id


class SecretThrottled(SecretError):
    """The store refused the read for its request rate, after the SDK's retries."""

    retry_after_seconds = 5
    """What to tell a caller: past the SDK's back-off, a few seconds lets the rate recover."""


THROTTLE_CODES = frozenset({"ThrottlingException", "TooManyRequestsException", "Throttling"})
"""The error codes Parameter Store and Secrets Manager answer a read over their rate with."""


def _default_client() -> Any:
    return client("secretsmanager")


def _default_ssm_client() -> Any:
    return client("ssm")


class SecretCache:
    """Powertools' ``SecretsProvider`` over the process's shared client, made on first fetch."""

    def __init__(
        self,
        *,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        client_factory: Callable[[], Any] = _default_client,
        ssm_client_factory: Callable[[], Any] = _default_ssm_client,
    ) -> None:
        if ttl_seconds < 0:
            raise ValueError("ttl_seconds must not be negative")
        self.ttl_seconds = ttl_seconds
        self._client_factory = client_factory
        self._ssm_client_factory = ssm_client_factory
        self._provider: SecretsProvider | None = None
        self._ssm_provider: SSMProvider | None = None
        self._entries: dict[tuple[Any, ...], Any] = {}
        """The provider's cache (shared, so the sandbox can keep one per function)."""
        self._stale: set[str] = set()
        self._lock = threading.Lock()

    def _get(self, secret_id: str) -> str | bytes:
        # Loaded on first fetch: Powertools Parameters imports boto3, which a function that
        # refuses a request before reading a secret should not pay for.
        parameters = cold_path.load("aws_lambda_powertools.utilities.parameters")
        parameter = is_parameter(secret_id)
        with self._lock:
            provider: SecretsProvider | SSMProvider
            if parameter:
                if self._ssm_provider is None:
                    self._ssm_provider = parameters.SSMProvider(boto3_client=self._ssm_client_factory())
                    self._ssm_provider.store = self._entries
                provider = self._ssm_provider
                # The shared client is made anew after aws_clients.reset_clients() (tests, sandbox).
                provider.client = self._ssm_client_factory()
            else:
                if self._provider is None:
                    self._provider = parameters.SecretsProvider(boto3_client=self._client_factory())
                    self._provider.store = self._entries
                provider = self._provider
                provider.client = self._client_factory()
            forced = secret_id in self._stale
            self._stale.discard(secret_id)
        try:
            if parameter:
                value = provider.get(
                    secret_id, max_age=self.ttl_seconds, force_fetch=forced, decrypt=True
                )
            else:
                value = provider.get(secret_id, max_age=self.ttl_seconds, force_fetch=forced)
        except parameters.GetParameterError as err:
            cause = err.__context__
            code = (
                cause.response.get("Error", {}).get("Code", "Unknown")
                if isinstance(cause, ClientError)
                else "no value"
            )
            action = "GetParameter" if parameter else "GetSecretValue"
            if code in THROTTLE_CODES:
                raise SecretThrottled(secret_id, f"{action} throttled: {code}") from err
            raise SecretError(secret_id, f"{action} failed: {code}") from err
        if parameter and value == PARAMETER_PLACEHOLDER:
            raise SecretError(secret_id, "has no value yet (run make secrets)")
        if not isinstance(value, str | bytes):
            raise SecretError(secret_id, "has no value")
        return value

    def get_string(self, secret_id: str) -> str:
        """The secret's string value (a binary secret is decoded as UTF-8)."""
        value = self._get(secret_id)
        if isinstance(value, str):
            return value
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as err:
            raise SecretError(secret_id, "binary value is not UTF-8") from err

    def get_bytes(self, secret_id: str) -> bytes:
        """The secret's bytes (a string secret is encoded as UTF-8)."""
        value = self._get(secret_id)
        return value.encode("utf-8") if isinstance(value, str) else value

    def get_json(self, secret_id: str) -> dict[str, Any]:
        """The secret parsed as a JSON object (one fetch serves the text and every field)."""
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
                self._stale.clear()
            else:
                self._stale.add(secret_id)


default_cache = SecretCache()
"""The process-wide cache the module-level helpers use; creating it makes no client."""


def forget_all() -> None:
    """Forget every cached secret (a new container: ``entry.registry``)."""
    default_cache.invalidate()


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
