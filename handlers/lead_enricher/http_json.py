"""JSON over HTTPS with urllib: the one transport of the firmographic adapters.

No third-party HTTP client is vendored for two small APIs. Every call has a timeout and
returns whatever status the service gave, with its headers; a network failure raises
``HttpUnavailable``, so the adapters can tell "the service said no" from "it did not answer".
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class HttpUnavailable(Exception):
    """No answer: DNS, connection, TLS or timeout."""


@dataclass(frozen=True)
class HttpAnswer:
    """Any answer the service gave: status, headers (lower-cased names) and decoded JSON."""

    status: int
    headers: Mapping[str, str]
    body: Any


def exchange(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
) -> HttpAnswer:
    """One call that returns every status with its headers; raises only ``HttpUnavailable``.

    The provider adapters read rate-limit headers (``Retry-After``, the per-window counters)
    on 2xx and 4xx answers alike. A body that is not JSON is kept as text.
    """
    if not url.startswith("https://") and not url.startswith("http://localhost"):
        raise ValueError("only https URLs (or a local test server) are called")
    request = urllib.request.Request(url, method=method)  # noqa: S310 - scheme checked above
    request.add_header("accept", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            status, raw, got = int(response.status), response.read(), response.headers
    except urllib.error.HTTPError as err:
        status, raw, got = err.code, (err.read() if err.fp else b""), err.headers
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        raise HttpUnavailable(str(err)) from err
    names = {k.lower(): v for k, v in (got.items() if got is not None else [])}
    text = raw.decode("utf-8", "replace") if raw else ""
    try:
        body: Any = json.loads(text) if text else None
    except ValueError:
        body = text
    return HttpAnswer(status, names, body)
