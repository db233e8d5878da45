"""The one HubSpot client dm and ler share: date-based paths, retries, paging, rate limits.

Everything HubSpot-specific about *transport* lives here; the adapters (dm's and ler's
``crm.py``) only say which resource they want. urllib only: no HTTP library is vendored for it.

* **Paths** carry the date-based version: ``crm_path("objects", "contacts", "123")`` is
  ``/crm/objects/2026-09/contacts/123``; ``crm_path("associations", "contacts", "deals",
  "batch", "read")`` is ``/crm/associations/2026-09/contacts/deals/batch/read``. The root stays
  ``https://api.hubapi.com``. ("2026-03 API reference",
  https://developers.hubspot.com/docs/api-reference/2026-03/overview; the version and its
  support window: ``api_versions``.)
* **Auth** is a bearer token: a Service Key ("Make API requests using a service key (BETA)",
  https://developers.hubspot.com/docs/apps/developer-platform/build-apps/authentication/account-service-keys),
  or a legacy private-app token, which is sent the same way. The token may be a callable, so
  it is read from Secrets Manager at call time.
* **Rate limits** (client side, per process): a rolling burst window (100 requests per 10
  seconds on Free and Starter, 190 on Professional and Enterprise; Service Keys have the
  limits of privately distributed apps), the daily count (250,000 / 650,000 / 1,000,000), and
  the CRM search endpoints' own limit (4 requests per second, kept below HubSpot's figure).
  ("API usage guidelines and limits",
  https://developers.hubspot.com/docs/developer-tooling/platform/usage-guidelines; changelog
  "Increasing our API limits", https://developers.hubspot.com/changelog/increasing-our-api-limits;
  "CRM Search API Rate Limit Increase",
  https://developers.hubspot.com/changelog/crm-search-api-rate-limit-increase.)
* **Retries**, bounded: a 429 is retried after ``Retry-After`` (seconds or an HTTP date), or
  with exponential backoff and jitter without one; a 429 whose ``policyName`` is ``DAILY`` is
  not retried (the day's quota is gone). A 5xx or no answer is retried only for a request that
  is safe to repeat (GET, PUT, PATCH, DELETE, or a POST the caller marks idempotent: batch
  reads, search, association writes), since a create that timed out may have happened. No
  wait ever runs past the caller's deadline. (HubSpot, "Breaking changes on the HubSpot
  platform", https://developers.hubspot.com/docs/breaking-change-definition: retry on the
  status code, never on the message.)
* **Paging**: ``paging.next.after`` cursors until absent.
* **A rotated key**: Service Keys do not expire, but one can be rotated or revoked. A 401 is
  not retried blindly: with ``on_unauthorized`` (the caller forgets its cached secret) and a
  token read at call time, the request is sent once more with the freshly read key.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from handlers.common.api_versions import HUBSPOT_DEFAULT_VERSION

BASE_URL = "https://api.hubapi.com"
PAGE_LIMIT = 100
"""Largest page of the objects list endpoint, and the batch size used for batch calls."""
SAFE_METHODS = frozenset({"GET", "PUT", "PATCH", "DELETE", "HEAD"})


@dataclass(frozen=True)
class RateLimit:
    """HubSpot's limits for one app in one account (a Service Key counts as one app)."""

    burst: int
    daily: int
    window_s: float = 10.0
    search_per_second: int = 4


TIERS: dict[str, RateLimit] = {
    "free": RateLimit(burst=100, daily=250_000),
    "starter": RateLimit(burst=100, daily=250_000),
    "professional": RateLimit(burst=190, daily=650_000),
    "enterprise": RateLimit(burst=190, daily=1_000_000),
}
DEFAULT_TIER = "starter"
"""The lowest limits: right for every account, at most half as fast as it could be."""


class HubSpotError(Exception):
    """HubSpot refused or failed a call (after any retries).

    ``status`` is 0 when nothing answered; ``retryable`` says a later attempt (another
    invocation, the queue's redelivery) may succeed; ``category`` and ``correlation_id`` come
    from HubSpot's error body.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        retryable: bool = False,
        body: str = "",
        category: str = "",
        correlation_id: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.body = body
        self.category = category
        self.correlation_id = correlation_id


REQUIRED_PROPERTY_CODES = frozenset(
    {"REQUIRED_PROPERTY", "MISSING_REQUIRED_PROPERTY", "PROPERTY_DOESNT_EXIST"}
)
"""Error codes of a write refused for a property the portal requires or does not have."""
_QUOTED = re.compile(r"""["'`]([A-Za-z0-9_]{1,100})["'`]""")
_LISTED = re.compile(r"\[([A-Za-z0-9_, ]{1,300})\]")


def refused_properties(err: HubSpotError) -> tuple[str, ...] | None:
    """The properties a 400 ``VALIDATION_ERROR`` names as required (or unknown to the portal),
    or None when the error is something else.

    From the 2026-09 API version HubSpot applies a portal's own rules to API writes: a property
    an admin made required (on the Create Record form, or conditionally) missing from a create
    answers 400 ``VALIDATION_ERROR`` ("Breaking Change: CRM API Write Validation Enforcement
    Starting with the 2026-09 API Version",
    https://developers.hubspot.com/changelog/crm-api-write-validation-enforcement). The names
    come from the documented error shapes: ``errors[].context.propertyName`` and the codes of
    :data:`REQUIRED_PROPERTY_CODES`, or the message ("Some required properties for CONTACT
    creates are missing: [One of [firstname, email, lastname]]",
    https://developers.hubspot.com/changelog/crm-imports-api-new-validation-for-required-properties).
    A name is never invented: an empty tuple means "required, but HubSpot did not say which".
    """
    if err.status != 400 or err.category != "VALIDATION_ERROR":
        return None
    try:
        info = json.loads(err.body) if err.body else {}
    except ValueError:
        info = {}
    info = info if isinstance(info, dict) else {}
    details = [e for e in info.get("errors") or [] if isinstance(e, dict)]
    messages = [str(info.get("message") or "")] + [str(e.get("message") or "") for e in details]
    # "Property values were not valid: [{...,"error":"PROPERTY_DOESNT_EXIST","name":"x"}]":
    # the per-property verdicts ride inside the message as JSON.
    for message in messages:
        _, _, tail = message.partition(": [")
        try:
            verdicts = json.loads("[" + tail) if tail else []
        except ValueError:
            verdicts = []
        details += [
            {"code": v.get("error"), "context": {"propertyName": [v.get("name")]}}
            for v in verdicts
            if isinstance(v, dict) and v.get("name") and str(v.get("error")) in REQUIRED_PROPERTY_CODES
        ]
    codes = {str(e.get("code") or "").upper() for e in details}
    if not (codes & REQUIRED_PROPERTY_CODES) and not any("required" in m.lower() for m in messages):
        return None
    names: list[str] = []
    for e in details:
        if str(e.get("code") or "").upper() not in REQUIRED_PROPERTY_CODES and "required" not in str(
            e.get("message") or ""
        ).lower():
            continue
        context = e.get("context") if isinstance(e.get("context"), dict) else {}
        named = (context or {}).get("propertyName") or []
        names += [str(v) for v in ([named] if isinstance(named, str) else named)]
    if not names:
        for message in messages:
            names += _QUOTED.findall(message)
            for group in _LISTED.findall(message):
                names += [n.strip() for n in group.split(",") if n.strip()]
    return tuple(dict.fromkeys(n for n in names if n.lower() not in {"one", "of"}))[:10]


class BudgetExhausted(HubSpotError):
    """The day's request quota is spent (HubSpot's ``DAILY`` 429 or our own count)."""


class DeadlineReached(HubSpotError):
    """The next wait would run past the caller's deadline; nothing was sent."""


@dataclass
class Limiter:
    """A rolling-window limiter: at most ``limit`` starts in any ``window_s`` seconds.

    ``acquire`` returns how long the caller must wait first (it records the start at the end
    of that wait), so time can be simulated in tests and benchmarks.
    """

    limit: int
    window_s: float
    margin_s: float = 0.5
    """HubSpot counts arrivals, we count sends: a request sent exactly one window after the
    first may arrive before HubSpot's window has moved on (measured: 9 429s in 1,009 requests
    without it, in benchmarks/bench_hubspot_read.py)."""
    starts: deque[float] = field(default_factory=deque)

    def delay(self, now: float) -> float:
        span = self.window_s + self.margin_s
        while self.starts and self.starts[0] <= now - span:
            self.starts.popleft()
        if len(self.starts) < self.limit:
            return 0.0
        return self.starts[0] + span - now

    def record(self, at: float) -> None:
        self.starts.append(at)


def _retry_after(value: str | None, now_epoch: float) -> float | None:
    """Seconds from a ``Retry-After`` header: delta-seconds or an HTTP date (RFC 9110)."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now_epoch)


class HubSpotClient:
    """HTTPS JSON calls to HubSpot with the version in the path, limits and bounded retries."""

    def __init__(
        self,
        token: str | Callable[[], str],
        *,
        version: str = HUBSPOT_DEFAULT_VERSION,
        base_url: str = BASE_URL,
        limits: RateLimit = TIERS[DEFAULT_TIER],
        timeout: float = 10.0,
        max_attempts: int = 5,
        max_wait_s: float = 30.0,
        deadline: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float],
        jitter: Callable[[], float] = random.random,
        on_unauthorized: Callable[[], None] | None = None,
    ) -> None:
        if isinstance(token, str) and not token:
            raise ValueError("HubSpot token is empty")
        base = base_url.rstrip("/")
        if not (base.startswith("https://") or base.startswith(("http://localhost", "http://127.0.0.1"))):
            raise ValueError("HubSpot is only called over https (or a local test server)")
        self._token = token
        self.version = version
        self.base_url = base
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.max_wait_s = max_wait_s
        self.deadline = deadline
        self._sleep, self._clock, self._wall, self._jitter = sleep, clock, wall, jitter
        self._on_unauthorized = on_unauthorized
        self.limits = limits
        self._burst = Limiter(limits.burst, limits.window_s)
        self._search = Limiter(limits.search_per_second, 1.0, margin_s=0.1)
        self.requests = 0
        """Requests sent by this client (retries included): the daily count."""
        self.retries = 0
        self.waited_s = 0.0
        """Time spent waiting on the limiter and on retries."""

    # Paths -------------------------------------------------------------------------------

    def crm_path(self, api: str, *parts: str) -> str:
        """``/crm/<api>/<version>/<parts...>``, each part percent-encoded."""
        tail = "/".join(urllib.parse.quote(str(p), safe="") for p in parts)
        return f"/crm/{api}/{self.version}" + (f"/{tail}" if tail else "")

    # Calls -------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        idempotent: bool | None = None,
    ) -> Any:
        """Decoded JSON (None for an empty body) of a 2xx answer; ``HubSpotError`` otherwise."""
        safe = method in SAFE_METHODS if idempotent is None else idempotent
        url = f"{self.base_url}{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode("utf-8")
        attempt = 0
        reauthenticated = False
        while True:
            attempt += 1
            self._wait_for_limits(path)
            status, headers, raw, failure = self._send(method, url, data)
            if failure is None and 200 <= status < 300:
                return json.loads(raw) if raw else None
            error = self._error(method, path, status, raw, failure)
            if status == 401 and not reauthenticated and callable(self._token) and self._on_unauthorized:
                # Refused before anything was applied: re-read the key (rotated?) and send again.
                self._on_unauthorized()
                reauthenticated = True
                continue
            if isinstance(error, BudgetExhausted) or not error.retryable:
                raise error
            if status != 429 and not safe:
                # The request may have been applied: the caller decides, not a blind repeat.
                raise error
            if attempt >= self.max_attempts:
                raise error
            wait = _retry_after(headers.get("retry-after"), self._wall()) if status == 429 else None
            if wait is None:
                wait = min(self.max_wait_s, 0.5 * 2 ** (attempt - 1)) * (0.5 + self._jitter() / 2)
            if wait > self.max_wait_s:
                raise error
            self._pause(wait, error)
            self.retries += 1

    def _pause(self, seconds: float, cause: HubSpotError | None = None) -> None:
        if seconds <= 0:
            return
        if self.deadline is not None and self._clock() + seconds > self.deadline:
            if cause is not None:
                raise cause
            raise DeadlineReached("HubSpot: the rate-limit wait would pass the deadline")
        self._sleep(seconds)
        self.waited_s += seconds

    def _wait_for_limits(self, path: str) -> None:
        if self.requests >= self.limits.daily:
            raise BudgetExhausted(
                f"HubSpot: this client's daily budget of {self.limits.daily} requests is spent",
                status=429,
            )
        limiters = [self._burst] + ([self._search] if path.endswith("/search") else [])
        for limiter in limiters:
            self._pause(limiter.delay(self._clock()))
        now = self._clock()
        for limiter in limiters:
            limiter.record(now)
        self.requests += 1

    def _send(
        self, method: str, url: str, data: bytes | None
    ) -> tuple[int, dict[str, str], bytes, str | None]:
        request = urllib.request.Request(url, data=data, method=method)  # noqa: S310 - scheme checked
        token = self._token() if callable(self._token) else self._token
        request.add_header("authorization", f"Bearer {token}")
        request.add_header("accept", "application/json")
        if data is not None:
            request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                headers = {k.lower(): v for k, v in response.headers.items()}
                return int(response.status), headers, response.read(), None
        except urllib.error.HTTPError as err:
            headers = {k.lower(): v for k, v in (err.headers or {}).items()}
            raw = err.read() if err.fp else b""
            return err.code, headers, raw, None
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            return 0, {}, b"", str(err)

    def _error(
        self, method: str, path: str, status: int, raw: bytes, failure: str | None
    ) -> HubSpotError:
        where = f"{method} {path.split('?')[0]}"
        if failure is not None:
            return HubSpotError(f"{where}: no answer ({failure})", retryable=True)
        text = raw.decode("utf-8", "replace")
        try:
            parsed = json.loads(text) if text else {}
        except ValueError:
            parsed = {}
        info = parsed if isinstance(parsed, dict) else {}
        message = str(info.get("message") or "")[:300]
        body = text[:2000]
        category = str(info.get("category") or info.get("errorType") or "")
        correlation = str(info.get("correlationId") or "")
        if status == 429 and info.get("policyName") == "DAILY":
            return BudgetExhausted(
                f"{where}: HTTP 429, daily limit reached",
                status=status, body=body, category=category, correlation_id=correlation,
            )
        return HubSpotError(
            f"{where}: HTTP {status} {message}".rstrip(),
            status=status,
            retryable=status == 429 or status >= 500,
            body=body,
            category=category,
            correlation_id=correlation,
        )

    # Paging ------------------------------------------------------------------------------

    def page(
        self, path: str, query: Mapping[str, str] | None = None, after: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of a list endpoint and the ``after`` cursor of the next (None at the end)."""
        params = dict(query or {})
        if after:
            params["after"] = after
        answer = self.request("GET", path, query=params) or {}
        results = [r for r in answer.get("results") or [] if isinstance(r, dict)]
        following = ((answer.get("paging") or {}).get("next") or {}).get("after")
        return results, None if following in (None, "") else str(following)

    def iterate(self, path: str, query: Mapping[str, str] | None = None) -> Iterator[dict[str, Any]]:
        """Every result of a list endpoint, page after page."""
        after: str | None = None
        while True:
            results, after = self.page(path, query, after)
            yield from results
            if after is None:
                return


def token_from_secret(value: str) -> str:
    """The bearer token in a secret: the bare token or JSON ``{"token": ...}``."""
    text = value.strip()
    if text.startswith("{"):
        return str(json.loads(text)["token"]).strip()
    return text


def chunks(items: list[Any], size: int = PAGE_LIMIT) -> Iterator[list[Any]]:
    """Batch inputs in HubSpot's batch size."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
