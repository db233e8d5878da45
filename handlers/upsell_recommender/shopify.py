"""The store port's real adapter: the Shopify Admin GraphQL API over urllib.

``ShopifyStore`` reads the product list (stock, price, product type, tags) for upsr-catalog-sync,
pages with cursors and waits out Shopify's throttling. Product tags ``complements:<category>``
name the categories a product goes with; the product type is its own category. No dependency
beyond the standard library.

Throttling, as the GraphQL Admin API does it ("GraphQL Admin API rate limits",
https://shopify.dev/docs/apps/build/apis/graphql-admin/rate-limits; "Shopify API limits",
https://shopify.dev/docs/api/usage/limits): a leaky bucket of query-cost points per app and
store (100 points/second on Standard plans). A throttled query answers with
``errors[].extensions.code == "THROTTLED"`` and ``extensions.cost.throttleStatus``
(``currentlyAvailable``, ``restoreRate``): the wait is the missing points over the restore
rate. A plain HTTP 429 (the REST Admin API's answer, also seen from GraphQL) is waited out for
its ``Retry-After``.

Authentication: the token comes from ``shopify_auth.AccessTokens`` (client-credentials grant,
cached until shortly before its 24-hour expiry, or a legacy static token). A 401 means the
token was revoked or expired early: the adapter forgets it, mints one more and retries the
query once; a second 401 is a ``StoreError``.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from handlers.common.api_versions import SHOPIFY_DEFAULT_VERSION
from handlers.common.clock import utc_now
from handlers.common.retry_after import retry_after_seconds
from handlers.upsell_recommender.domain import CatalogueItem, is_variant_id, to_decimal
from handlers.upsell_recommender.store import StoreAuthError, StoreError, cart_url, shop_domain

COMPLEMENT_TAG = "complements:"
"""Product tag naming a category the product goes with: ``complements:tents``."""

PRODUCTS_QUERY = """
query UpsellCatalogue($cursor: String) {
  products(first: 10, after: $cursor, query: "status:active") {
    pageInfo { hasNextPage endCursor }
    nodes {
      id
      title
      productType
      tags
      status
      variants(first: 40) {
        pageInfo { hasNextPage }
        nodes {
          id
          sku
          title
          price
          availableForSale
          inventoryQuantity
          inventoryItem { tracked }
        }
      }
    }
  }
}
""".strip()
"""Ten products of forty variants per page keeps the requested cost under Shopify's 1000."""

Opener = Callable[[urllib.request.Request, float], Any]

DEFAULT_API_VERSION = SHOPIFY_DEFAULT_VERSION
"""Shopify's current stable Admin API version (stack config ``shopifyApiVersion`` sets it)."""


def _urlopen(request: urllib.request.Request, timeout: float) -> Any:
    # The URL is always https://<shop>.myshopify.com/admin/api/... built from a checked domain.
    return urllib.request.urlopen(request, timeout=timeout)  # noqa: S310


def _gid_number(gid: object) -> str:
    """``gid://shopify/ProductVariant/123`` -> ``123``."""
    return str(gid).rsplit("/", 1)[-1]


def catalogue_rows(product: Mapping[str, Any]) -> Iterator[CatalogueItem]:
    """The catalogue rows (one per variant with a SKU) of one GraphQL product node."""
    tags = [str(t) for t in product.get("tags") or []]
    complements = frozenset(
        t[len(COMPLEMENT_TAG) :].strip().lower()
        for t in tags
        if t.lower().startswith(COMPLEMENT_TAG) and t[len(COMPLEMENT_TAG) :].strip()
    )
    active = str(product.get("status", "")).upper() == "ACTIVE"
    title = str(product.get("title") or "").strip()
    for variant in ((product.get("variants") or {}).get("nodes")) or []:
        sku = str(variant.get("sku") or "").strip()
        variant_id = _gid_number(variant.get("id"))
        price = to_decimal(variant.get("price"))
        if not sku or len(sku) > 64 or price is None or not is_variant_id(variant_id):
            continue
        variant_title = str(variant.get("title") or "").strip()
        tracked = bool((variant.get("inventoryItem") or {}).get("tracked", True))
        quantity = variant.get("inventoryQuantity")
        yield CatalogueItem(
            sku=sku,
            variant_id=variant_id,
            product_id=_gid_number(product.get("id")),
            title=title if variant_title in {"", "Default Title"} else f"{title} - {variant_title}",
            category=str(product.get("productType") or "").strip().lower(),
            complements=complements,
            price=price,
            stock=(int(quantity) if isinstance(quantity, int) else 0) if tracked else None,
            available=active and bool(variant.get("availableForSale")),
        )


class ShopifyStore:
    """The store port over the Shopify Admin GraphQL API.

    ``token`` is called for the Admin API access token when a request is made, so building the
    adapter reads nothing; ``refresh_token`` (``AccessTokens.invalidate``) is called once after
    a 401 before the query is retried.
    """

    def __init__(
        self,
        domain: str,
        token: Callable[[], str],
        *,
        refresh_token: Callable[[], None] | None = None,
        api_version: str = DEFAULT_API_VERSION,
        opener: Opener = _urlopen,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], dt.datetime] = utc_now,
        timeout_s: float = 20.0,
        max_throttle_waits: int = 6,
    ) -> None:
        self.domain = shop_domain(domain)
        self._token = token
        self._refresh = refresh_token
        self._endpoint = f"https://{self.domain}/admin/api/{api_version}/graphql.json"
        self._open = opener
        self._sleep = sleep
        self._now = now
        self._timeout = timeout_s
        self._max_waits = max_throttle_waits
        self.requests = 0

    def cart_url(self, variant_id: str) -> str:
        return cart_url(self.domain, variant_id)

    def catalogue(self) -> Iterator[CatalogueItem]:
        cursor: str | None = None
        while True:
            data = self._query(PRODUCTS_QUERY, {"cursor": cursor})
            products = (data.get("products") or {}) if isinstance(data, Mapping) else {}
            for product in products.get("nodes") or []:
                yield from catalogue_rows(product)
            page = products.get("pageInfo") or {}
            if not page.get("hasNextPage"):
                return
            cursor = str(page.get("endCursor") or "")
            if not cursor:
                raise StoreError("Shopify reported a next page without a cursor")

    def _query(self, query: str, variables: Mapping[str, Any]) -> Any:
        """One GraphQL call, waiting out throttling; the ``data`` member of the answer."""
        waits = 0
        refreshed = False
        while True:
            status, answer, retry_after = self._post({"query": query, "variables": dict(variables)})
            if status == 401 and self._refresh is not None and not refreshed:
                self._refresh()  # revoked or expired early: one fresh token, one retry
                refreshed = True
                continue
            throttled_for = self._throttle_wait(status, answer, retry_after)
            if throttled_for is None:
                break
            waits += 1
            if waits > self._max_waits:
                raise StoreError("Shopify kept throttling the catalogue query")
            self._sleep(throttled_for)
        if status in (401, 403):
            raise StoreAuthError(f"Shopify refused the Admin API key (HTTP {status})")
        if status >= 400:
            raise StoreError(f"Shopify Admin API answered HTTP {status}")
        errors = answer.get("errors") if isinstance(answer, Mapping) else None
        if errors:
            raise StoreError(f"Shopify GraphQL errors: {str(errors)[:300]}")
        if not isinstance(answer, Mapping) or not isinstance(answer.get("data"), Mapping):
            raise StoreError("Shopify answered without data")
        return answer["data"]

    def _throttle_wait(self, status: int, answer: Any, retry_after: str | None) -> float | None:
        """Seconds to wait before asking again, or None when the answer is not a throttle."""
        if status == 429:
            asked = retry_after_seconds(retry_after, self._now().timestamp())
            return 2.0 if asked is None else min(max(asked, 0.5), 30.0)
        if not isinstance(answer, Mapping):
            return None
        errors = answer.get("errors") or []
        if not any(
            isinstance(e, Mapping) and (e.get("extensions") or {}).get("code") == "THROTTLED"
            for e in errors
        ):
            return None
        cost = (answer.get("extensions") or {}).get("cost") or {}
        status_ = cost.get("throttleStatus") or {}
        try:
            missing = float(cost.get("requestedQueryCost", 0)) - float(
                status_.get("currentlyAvailable", 0)
            )
            rate = float(status_.get("restoreRate", 50)) or 50.0
        except (TypeError, ValueError):
            return 2.0
        return min(max(missing / rate, 0.5), 30.0)

    def _post(self, payload: Mapping[str, Any]) -> tuple[int, Any, str | None]:
        self.requests += 1
        # The endpoint is https://<checked shop domain>/admin/api/...: no other scheme or host.
        request = urllib.request.Request(  # noqa: S310
            self._endpoint,
            data=json.dumps(payload).encode("utf-8"),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json",
                "X-Shopify-Access-Token": self._token(),
            },
        )
        try:
            with self._open(request, self._timeout) as response:
                status = int(getattr(response, "status", 200))
                body = response.read()
                retry_after = response.headers.get("Retry-After") if response.headers else None
        except urllib.error.HTTPError as err:
            status, body = err.code, err.read() or b""
            retry_after = err.headers.get("Retry-After") if err.headers else None
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise StoreError(f"Shopify Admin API unreachable: {err}") from err
        try:
            answer = json.loads(body) if body else {}
        except ValueError:
            answer = {}
            if status < 400:
                raise StoreError("Shopify answered with something that is not JSON") from None
        return status, answer, retry_after
