"""upsr-catalog-sync: the Shopify Admin API read page by page, and the catalogue rows it writes (only what changed, never older over newer)."""

from __future__ import annotations

import email.message
import io
import json
import urllib.error
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from handlers.upsell_recommender.shopify import DEFAULT_API_VERSION, ShopifyStore, catalogue_rows
from handlers.upsell_recommender.store import StoreAuthError, StoreError
from tests.handlers.upsr.conftest import SHOP, T0, FakeResponse, World, gql_product, page


def opener(answers: list[Any], seen: list[Any]) -> Callable[[Any, float], Any]:
    def open_(request: Any, timeout: float) -> Any:
        seen.append(request)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return open_


def test_admin_api_pages_and_maps_products() -> None:
    seen: list[Any] = []
    throttled = {
        "errors": [{"message": "Throttled", "extensions": {"code": "THROTTLED"}}],
        "extensions": {
            "cost": {
                "requestedQueryCost": 800,
                "throttleStatus": {"currentlyAvailable": 300, "restoreRate": 100},
            }
        },
    }
    answers: list[Any] = [
        FakeResponse(
            200, page([gql_product(1, sku="MAT-A", tags=["Complements:Tents", "sale"])], "c1")
        ),
        FakeResponse(200, throttled),
        FakeResponse(200, page([gql_product(2, sku="MAT-B", tags=[], tracked=False)], None)),
    ]
    waits: list[float] = []
    store = ShopifyStore(SHOP, lambda: "shpat_x", opener=opener(answers, seen), sleep=waits.append)
    rows = list(store.catalogue())
    assert [r.sku for r in rows] == ["MAT-A", "MAT-B"]
    first = rows[0]
    assert (first.variant_id, first.product_id, first.category) == ("11", "1", "sleeping-mats")
    assert first.complements == frozenset({"tents"}) and first.price == Decimal("19.50")
    assert first.stock == 3 and rows[1].stock is None  # untracked inventory
    assert waits == [5.0]  # (800 - 300) / 100 points per second
    assert seen[0].full_url == f"https://{SHOP}/admin/api/{DEFAULT_API_VERSION}/graphql.json"
    assert seen[0].get_header("X-shopify-access-token") == "shpat_x"
    assert json.loads(seen[1].data)["variables"] == {"cursor": "c1"}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            urllib.error.HTTPError("u", 401, "no", email.message.Message(), io.BytesIO(b"{}")),
            "refused the Admin API key",
        ),
        (urllib.error.URLError("dns"), "unreachable"),
        (FakeResponse(200, {"errors": [{"message": "bad field"}]}), "GraphQL errors"),
        (FakeResponse(500, {}), "HTTP 500"),
    ],
)
def test_admin_api_failures_raise_store_error(answer: Any, message: str) -> None:
    store = ShopifyStore(SHOP, lambda: "k", opener=opener([answer], []), sleep=lambda _: None)
    with pytest.raises(StoreError, match=message):
        list(store.catalogue())


def test_admin_api_gives_up_after_repeated_throttling() -> None:
    answers = [FakeResponse(429, {}, {"Retry-After": "1"}) for _ in range(4)]
    store = ShopifyStore(
        SHOP, lambda: "k", opener=opener(answers, []), sleep=lambda _: None, max_throttle_waits=3
    )
    with pytest.raises(StoreError, match="kept throttling"):
        list(store.catalogue())


def test_archived_products_are_not_available() -> None:
    product = gql_product(1, sku="OLD", tags=[])
    product["status"] = "ARCHIVED"
    [row] = catalogue_rows(product)
    assert not row.in_stock()


def test_an_older_sync_never_overwrites_a_newer_row(world: World) -> None:
    from handlers.upsell_recommender.catalogue import upsert

    table = world.tables["catalogue"]
    row = world.store.products[1]
    assert upsert(table, replace(row, synced_at=T0, stock=1))
    assert not upsert(table, replace(row, synced_at=T0 - 900, stock=50))
    assert table.get_item(Key={"sku": row.sku})["Item"]["stock"] == 1


def _row_writes(world: World) -> list[tuple[str, str]]:
    """Every write call on the catalogue that names a product row, as (operation, sku)."""
    calls: list[tuple[str, str]] = []

    def record(params: dict[str, Any], model: Any, **_: Any) -> None:
        body = json.loads(params["body"])  # the request as sent
        sku = (body.get("Item") or body.get("Key") or {}).get("sku", {}).get("S", "")
        if sku != "#last-complete-sync":
            calls.append((model.name, sku))

    events = world.tables["catalogue"].meta.client.meta.events
    for operation in ("PutItem", "UpdateItem"):
        events.register(f"before-call.dynamodb.{operation}", record)
    return calls


def test_a_sync_writes_only_the_rows_that_changed(world: World) -> None:
    """Issue 28: every run used to put every row (2,920 runs a month x the catalogue)."""
    calls = _row_writes(world)
    assert world.sync(now=T0)["written"] == 6
    assert len(calls) == 6
    calls.clear()
    for n in range(1, 4):  # three more 15-minute runs over an unchanged store
        summary = world.sync(now=T0 + n * 900)
        assert (summary["written"], summary["unchanged"]) == (0, 6)
    assert calls == []
    world.store.products[1] = replace(world.store.products[1], stock=0)
    assert world.sync(now=T0 + 4 * 900)["written"] == 1
    assert calls == [("PutItem", world.store.products[1].sku)]
    calls.clear()
    gone = world.store.products.pop()
    assert world.sync(now=T0 + 5 * 900)["delisted"] == 1
    assert calls == [("UpdateItem", gone.sku)]
    calls.clear()
    assert world.sync(now=T0 + 6 * 900)["delisted"] == 0  # delisted once
    assert calls == []


def test_an_unchanged_row_is_as_fresh_as_the_last_complete_sync(world: World) -> None:
    from handlers.upsell_recommender.catalogue import fetch, scan_all

    table = world.tables["catalogue"]
    world.sync(now=T0)
    gone = world.store.products.pop()
    later = T0 + 7 * 3600  # past the six-hour age limit: no row was rewritten since T0
    world.sync(now=later)
    rows = fetch(table, [p.sku for p in world.store.products] + [gone.sku])
    assert {r.synced_at for sku, r in rows.items() if sku != gone.sku} == {later}
    assert rows[gone.sku].available is False and rows[gone.sku].synced_at == later
    assert all(r.synced_at == later for r in scan_all(table) if r.available)
    assert "#last-complete-sync" not in {r.sku for r in scan_all(table)}


def test_sync_keeps_the_first_of_duplicate_skus_and_forgets_a_refused_key(world: World) -> None:
    from handlers.upsell_recommender import syncing

    world.store.products.append(replace(world.store.products[0], variant_id="999"))
    assert world.sync()["duplicate_skus"] == 1
    item = world.tables["catalogue"].get_item(Key={"sku": "TENT-2P"})["Item"]
    assert item["variant_id"] == "1001"
    forgotten: list[bool] = []
    deps = replace(world.sync_deps(), forget_key=lambda: forgotten.append(True))
    world.store.fail_with = StoreError("Shopify Admin API unreachable")
    with pytest.raises(StoreError):
        syncing.run(deps, now=T0)
    assert forgotten == []  # an outage keeps the token: it is still good
    world.store.fail_with = StoreAuthError("refused")
    with pytest.raises(StoreError):
        syncing.run(deps, now=T0)
    assert forgotten == [True]
