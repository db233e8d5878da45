"""boto3 clients for the sandbox itself and for scenarios playing the outside world.

One botocore session per purpose, clients cached per (service, region). Internal clients (the
sandbox deploying and polling) are left out of the call ledger; external ones (an operator
setting a secret, a customer uploading a file) are recorded but never IAM-checked, since they
act for no function.
"""

from __future__ import annotations

import threading
from typing import Any

import boto3
from botocore.config import Config

_internal = threading.local()


def creating_internal() -> bool:
    """True while the sandbox creates one of its own clients (the interceptor skips those)."""
    return bool(getattr(_internal, "active", False))


class Clients:
    """Cached clients, created lazily, per service and region."""

    def __init__(self, *, internal: bool) -> None:
        self.internal = internal
        self._session: Any = None
        self._clients: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def __call__(self, service: str, region: str) -> Any:
        key = (service, region)
        found = self._clients.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._clients.get(key)
            if found is None:


                if self._session is None:
                    self._session = boto3.session.Session()
                _internal.active = self.internal
                try:
                    found = self._session.client(
                        service,
                        region_name=region,
                        config=Config(retries={"mode": "standard", "max_attempts": 2}),
                    )
                finally:
                    _internal.active = False
                self._clients[key] = found
        return found
