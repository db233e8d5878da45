"""The sandbox's external-service stand-ins answer the real adapters as the providers document.

``FirmographicsStandIn`` behind both enrichment adapters (the demo's dev stack uses one of
them), and ``ShopifyStandIn`` behind the Shopify adapter: grant, pages, expiry.
"""

from __future__ import annotations

import json

import pytest

from handlers.lead_enricher.providers.base import ProviderUnavailable
from handlers.lead_enricher.providers.factory import make_provider
from handlers.upsell_recommender.domain import CatalogueItem
from handlers.upsell_recommender.shopify import ShopifyStore
from handlers.upsell_recommender.shopify_auth import AccessTokens
from handlers.upsell_recommender.store import StoreError
from sandbox.standins import FirmographicsStandIn, ShopifyStandIn

ACME = {"name": "Acme Widgets", "employees": 40, "city": "Leeds", "country": "United Kingdom"}


@pytest.mark.parametrize("provider", ["pdl", "apollo"])
def test_both_enrichment_adapters_read_the_stand_in(provider: str) -> None:
    stand_in = FirmographicsStandIn("key-1", {"acme-widgets.co.uk": ACME})
    adapter = make_provider(provider, lambda: "key-1", transport=stand_in)
    found = adapter.lookup("acme-widgets.co.uk")
    assert found is not None
    assert (found["company_name"], found["employees"], found["company_city"]) == (
        "Acme Widgets",
        40,
        "Leeds",
    )
    assert adapter.lookup("nobody.example") is None
    wrong = make_provider(provider, lambda: "other", transport=stand_in)
    with pytest.raises(ProviderUnavailable, match="401"):
        wrong.lookup("acme-widgets.co.uk")


def _items(n: int) -> list[CatalogueItem]:
    from decimal import Decimal

    return [
        CatalogueItem(
            sku=f"SKU-{i}",
            variant_id=str(1000 + i),
            product_id=str(i),
            title=f"Item {i}",
            category="tents",
            complements=frozenset({"mats"}),
            price=Decimal("10.00"),
            stock=3,
            available=True,
        )
        for i in range(n)
    ]


def test_the_shopify_stand_in_grants_pages_and_expires_tokens() -> None:
    now = [1_780_000_000.0]
    shop = ShopifyStandIn("cid", "csecret", _items(23), lambda: now[0])
    secret = json.dumps({"client_id": "cid", "client_secret": "csecret"})
    tokens = AccessTokens(
        "example-shop.myshopify.com", lambda: secret, opener=shop, clock=lambda: now[0]
    )
    store = ShopifyStore(
        "example-shop.myshopify.com", tokens.token, refresh_token=tokens.invalidate, opener=shop
    )
    assert [r.sku for r in store.catalogue()] == [f"SKU-{i}" for i in range(23)]
    assert shop.grants == 1 and len(shop.api_calls) == 3  # ten products a page
    now[0] += 86400
    list(store.catalogue())
    assert shop.grants == 2 and shop.refused == 0
    bad = AccessTokens(
        "example-shop.myshopify.com",
        lambda: json.dumps({"client_id": "cid", "client_secret": "wrong"}),
        opener=shop,
    )
    with pytest.raises(StoreError, match="invalid_client"):
        bad.token()
