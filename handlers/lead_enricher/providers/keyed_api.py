"""What the two firmographic adapters share: one keyed GET, one wait on a short 429.

PDL and Apollo both take the key in ``X-Api-Key``, answer a throttled call with 429 and say
when to come back in headers of their own. An adapter names itself, builds its URL, reads its
wait from the headers and reads its answer; this class makes the call, waits once when the
wait is short (``max_wait_s``) and otherwise raises ``RateLimited`` with the wait, so ler-retry
holds the lead until then.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from typing import Any

from handlers.lead_enricher.http_json import HttpAnswer, HttpUnavailable, exchange
from handlers.lead_enricher.providers.base import ProviderUnavailable, RateLimited

Exchange = Callable[..., HttpAnswer]


class KeyedEnrichmentApi:
    """A firmographic provider behind one keyed GET per domain."""

    name = ""
    """The provider's config value (``pdl``, ``apollo``)."""
    label = ""
    """The provider's name in error messages."""
    default_version = ""
    """The API version the adapter was written against (``handlers/common/api_versions.py``)."""

    def __init__(
        self,
        base_url: str,
        key: Callable[[], str],
        *,
        api_version: str | None = None,
        timeout: float = 8.0,
        max_wait_s: float = 3.0,
        transport: Exchange = exchange,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_version = (api_version or self.default_version).strip("/")
        self.key = key
        self.timeout = timeout
        self.max_wait_s = max_wait_s
        self._exchange = transport
        self._sleep = sleep
        self._clock = clock
        self.last_headers: Mapping[str, str] = {}

    # What each adapter says ----------------------------------------------------------------

    def url(self, domain: str) -> str:
        raise NotImplementedError

    def wait_seconds(self, headers: Mapping[str, str]) -> float | None:
        """How long a 429 asks us to wait, or None when it does not say."""
        raise NotImplementedError

    def message(self, answer: HttpAnswer) -> str:
        """The provider's error text, cut short."""
        raise NotImplementedError

    def read(self, answer: HttpAnswer) -> dict[str, Any] | None:
        """The lead's fields from a non-429 answer; None when the provider knows no company."""
        raise NotImplementedError

    # Shared --------------------------------------------------------------------------------

    def lookup(self, domain: str) -> dict[str, Any] | None:
        waited = False
        while True:
            answer = self._call(domain)
            if answer.status != 429:
                return self.read(answer)
            wait = self.wait_seconds(answer.headers)
            if waited or wait is None or wait > self.max_wait_s:
                raise RateLimited(f"{self.label} answered 429 ({self.message(answer)})", wait)
            self._sleep(wait)
            waited = True

    def unavailable(self, answer: HttpAnswer) -> ProviderUnavailable:
        return ProviderUnavailable(
            f"{self.label} answered {answer.status} ({self.message(answer)})"
        )

    def _call(self, domain: str) -> HttpAnswer:
        try:
            answer = self._exchange(
                "GET", self.url(domain), headers={"X-Api-Key": self.key()}, timeout=self.timeout
            )
        except HttpUnavailable as err:
            raise ProviderUnavailable(f"{self.label} unreachable: {err}") from err
        self.last_headers = answer.headers
        return answer
