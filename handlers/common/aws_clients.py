"""Process-wide boto3 clients and DynamoDB tables, created on first use.

Importing boto3 and building a client cost a large share of a cold start, and a function that
rejects a bad request should not pay for them. Nothing here runs at import time: the first
call creates the client, later calls in the same warm container reuse it. Tests call
``reset_clients()`` so no client outlives the moto context it was made in.

All clients of one region come from one boto3 session, so botocore parses each service model
once per process: a session per client re-read the models every time (five ``table()`` calls
cost about 870 ms against 166 ms with one session). Sessions are not thread-safe, so clients
are made under the lock; the clients themselves are.

All tables of one region come from one DynamoDB resource, so they share its one client and
its connections: a resource per table made a client per table, each paying its own creation
and, on its first call, its own TLS connection (upsr-order's three tables: two clients and two
handshakes more on its first request; ``make bench-init`` counts them).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from handlers.common import cold_path

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

_lock = threading.Lock()
_sessions: dict[str | None, Any] = {}
_clients: dict[tuple[str, str | None, str], Any] = {}
_tables: dict[tuple[str, str | None], Table] = {}
_resources: dict[str | None, Any] = {}

# Bedrock calls are retried by handlers.common.model_call with its own bounded backoff, so the
# SDK must not retry them a second time underneath; other services keep the SDK's standard mode.
_PROFILES: dict[str, dict[str, Any]] = {
    "standard": {
        "retries": {"mode": "standard", "total_max_attempts": 3},
        "connect_timeout": 5,
        "read_timeout": 20,
    },
    "model": {
        "retries": {"mode": "standard", "total_max_attempts": 1},
        "connect_timeout": 5,
        "read_timeout": 60,
    },
}


def _session(region: str | None) -> Any:
    """The process's boto3 session for ``region``; call with ``_lock`` held."""
    found = _sessions.get(region)
    if found is None:
        found = cold_path.load("boto3").session.Session(region_name=region)
        _sessions[region] = found
    return found


def client(service: str, region: str | None = None, *, profile: str = "standard") -> Any:
    """The cached boto3 client for ``service`` in ``region`` (None: the function's own region).

    ``profile`` picks timeouts and SDK retries: ``standard`` or ``model`` (no SDK retries).
    """
    if profile not in _PROFILES:
        raise ValueError(f"unknown client profile {profile!r}; use one of {sorted(_PROFILES)}")
    key = (service, region, profile)
    found = _clients.get(key)
    if found is not None:
        return found
    with _lock:
        found = _clients.get(key)
        if found is None:
            config = cold_path.load("botocore.config")
            found = _session(region).client(
                service,
                region_name=region,
                config=config.Config(**_PROFILES[profile]),
            )
            _clients[key] = found
        return found


def bedrock_runtime(region: str | None = None) -> Any:
    """The cached ``bedrock-runtime`` client, without SDK retries (model_call retries itself)."""
    return client("bedrock-runtime", region, profile="model")


def table(name: str, region: str | None = None) -> Table:
    """The cached DynamoDB ``Table`` resource for ``name`` (types converted by boto3), on the
    region's one DynamoDB resource."""
    key = (name, region)
    found = _tables.get(key)
    if found is not None:
        return found
    with _lock:
        found = _tables.get(key)
        if found is None:
            resource = _resources.get(region)
            if resource is None:
                resource = _session(region).resource("dynamodb", region_name=region)
                _resources[region] = resource
            found = resource.Table(name)
            _tables[key] = found
        return found


def reset_clients() -> None:
    """Forget every cached client and table (tests: one moto context each). The sessions, and
    so the parsed service models, stay: they hold no connection and no moto state."""
    with _lock:
        _clients.clear()
        _tables.clear()
        _resources.clear()
