"""The store port: the product list for the catalogue mirror and the add-to-cart URL.

The real adapter is ``shopify.ShopifyStore`` (Admin GraphQL API over urllib);
``testsupport.upsr.InMemoryStore`` is the fake the tests use. Both build the same cart URL
(``cart_url``), so what a test redirects to is what production redirects to.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol

from handlers.upsell_recommender.domain import CatalogueItem, is_variant_id

_SHOP_DOMAIN = re.compile(r"^[a-z0-9][a-z0-9-]*\.myshopify\.com$")


class StoreError(Exception):
    """The store could not be read (bad key, outage, malformed answer)."""


class StoreAuthError(StoreError):
    """The store refused the credentials (401/403, or the token grant was refused)."""


class Store(Protocol):
    """What the upsell recommender needs from the shop."""

    def catalogue(self) -> Iterator[CatalogueItem]:
        """Every sellable variant with a SKU (``synced_at`` left for the caller to stamp)."""
        ...

    def cart_url(self, variant_id: str) -> str:
        """The URL that puts one unit of ``variant_id`` in the customer's cart."""
        ...


def shop_domain(value: str) -> str:
    """``value`` if it is a ``<shop>.myshopify.com`` domain; ValueError otherwise."""
    domain = value.strip().lower()
    if not _SHOP_DOMAIN.match(domain):
        raise ValueError(f"{value!r} is not a <shop>.myshopify.com domain")
    return domain


def cart_url(domain: str, variant_id: str) -> str:
    """Shopify's cart permalink ``https://<shop>/cart/<variant_id>:1``.

    Only a numeric variant id is interpolated, so nothing from storage can steer the redirect
    to another host or path.
    """
    if not is_variant_id(variant_id):
        raise ValueError(f"{variant_id!r} is not a numeric variant id")
    return f"https://{shop_domain(domain)}/cart/{variant_id}:1"
