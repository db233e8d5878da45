"""Contract tests of the Shopify adapter's authentication and throttling, as documented today.

- The client-credentials grant ("About client credentials",
  shopify.dev/docs/apps/build/authentication-authorization/client-secrets): a form-encoded POST
  to ``https://{shop}.myshopify.com/admin/oauth/access_token`` answered with
  ``{"access_token": "shpat_xxxxx", "scope": "read_products,write_products", "expires_in": ...}``;
  the token lives 24 hours and is then requested again ("Using the client credentials
  grant", Step 3). The secret may instead hold a legacy static token.
- A revoked token: a 401 from the Admin API leads to one new grant and one retry.
- Throttling of the GraphQL Admin API (shopify.dev/docs/apps/build/apis/graphql-admin/rate-limits):
  a THROTTLED answer is waited out by its cost figures (``test_upsr_adapters``), a 429 by its
  ``Retry-After``.
- Webhooks are signed with the app's client secret (``X-Shopify-Hmac-Sha256``).

The HTTP layer is replaced by a scripted opener that records each ``urllib`` request.
"""

from __future__ import annotations

import email.message
import io
import json
import urllib.error
import urllib.parse
from collections.abc import Callable
from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.upsell_recommender.shopify import DEFAULT_API_VERSION, ShopifyStore
from handlers.upsell_recommender.shopify_auth import (
    AccessTokens,
    parse_store_secret,
    webhook_key,
)
from handlers.upsell_recommender.store import StoreError
from tests.handlers.upsr.conftest import (
    SHOP,
    FakeResponse,
    World,
    gql_product,
    page,
    shopify_order,
    sign,
    webhook_event,
)

CLIENT = json.dumps({"client_id": "a1b2c3client", "client_secret": "shpss_client_secret_0123"})
TOKEN_ANSWER = {  # Shopify's documented answer (expires_in as Shopify sends it: 24 h less 1 s)
    "access_token": "shpat_xxxxx",
    "scope": "read_products,write_products",
    "expires_in": 86399,
}


def http_error(status: int, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    message = email.message.Message()
    for name, value in (headers or {}).items():
        message[name] = value
    data = json.dumps(body if body is not None else {}).encode()
    return urllib.error.HTTPError("https://x", status, "error", message, io.BytesIO(data))


class Shopify:
    """A scripted shop: token answers and Admin API answers, with every request kept."""

    def __init__(self) -> None:
        self.tokens: list[Any] = []
        self.api: list[Any] = []
        self.seen: list[Any] = []
        self.counter = 0

    def token(self, answer: Any = None) -> None:
        if answer is None:
            self.counter += 1
            answer = FakeResponse(200, dict(TOKEN_ANSWER, access_token=f"shpat_{self.counter}"))
        self.tokens.append(answer)

    def open(self, request: Any, timeout: float) -> Any:
        self.seen.append(request)
        queue = self.tokens if request.full_url.endswith("/admin/oauth/access_token") else self.api
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def grants(self) -> list[Any]:
        return [r for r in self.seen if r.full_url.endswith("/admin/oauth/access_token")]

    def api_tokens(self) -> list[str]:
        return [
            r.get_header("X-shopify-access-token") for r in self.seen if "graphql" in r.full_url
        ]


class Clock:
    def __init__(self, now: float = 1_780_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def wired(
    shop: Shopify, secret: Callable[[], str] = lambda: CLIENT, clock: Clock | None = None
) -> tuple[AccessTokens, ShopifyStore]:
    tokens = AccessTokens(SHOP, secret, opener=shop.open, clock=clock or Clock())
    store = ShopifyStore(
        SHOP, tokens.token, refresh_token=tokens.invalidate, opener=shop.open, sleep=lambda _: None
    )
    return tokens, store


ONE_PAGE = page([gql_product(1, sku="MAT-A", tags=[])], None)


def test_the_grant_is_the_documented_request_and_its_token_is_used() -> None:
    shop = Shopify()
    shop.token(FakeResponse(200, TOKEN_ANSWER))
    shop.api.append(FakeResponse(200, ONE_PAGE))
    _, store = wired(shop)
    assert [r.sku for r in store.catalogue()] == ["MAT-A"]
    [grant] = shop.grants()
    assert grant.full_url == f"https://{SHOP}/admin/oauth/access_token"
    assert grant.get_method() == "POST"
    assert grant.get_header("Content-type") == "application/x-www-form-urlencoded"
    assert urllib.parse.parse_qs(grant.data.decode()) == {
        "grant_type": ["client_credentials"],
        "client_id": ["a1b2c3client"],
        "client_secret": ["shpss_client_secret_0123"],
    }
    assert shop.api_tokens() == ["shpat_xxxxx"]
    assert shop.seen[1].full_url == f"https://{SHOP}/admin/api/{DEFAULT_API_VERSION}/graphql.json"


def test_the_token_is_kept_until_shortly_before_expiry_then_renewed() -> None:
    shop, clock = Shopify(), Clock()
    tokens, store = wired(shop, clock=clock)
    shop.token()
    for _ in range(3):
        shop.api.append(FakeResponse(200, ONE_PAGE))
    list(store.catalogue())
    clock.now += 86399 - 300 - 1  # still more than the 5-minute margin left: reused
    list(store.catalogue())
    assert tokens.grants == 1
    clock.now += 2  # inside the margin: a new grant before the old token lapses
    shop.token()
    list(store.catalogue())
    assert tokens.grants == 2
    assert shop.api_tokens() == ["shpat_1", "shpat_1", "shpat_2"]


def test_a_401_leads_to_one_new_grant_and_one_retry() -> None:
    shop = Shopify()
    forgotten: list[bool] = []
    tokens = AccessTokens(
        SHOP,
        lambda: CLIENT,
        forget_secret=lambda: forgotten.append(True),
        opener=shop.open,
        clock=Clock(),
    )
    store = ShopifyStore(
        SHOP, tokens.token, refresh_token=tokens.invalidate, opener=shop.open, sleep=lambda _: None
    )
    shop.token()
    shop.token()
    shop.api += [
        http_error(401, {"errors": "[API] Invalid API key or access token"}),
        FakeResponse(200, ONE_PAGE),
    ]
    assert [r.sku for r in store.catalogue()] == ["MAT-A"]
    assert shop.api_tokens() == ["shpat_1", "shpat_2"]
    assert tokens.grants == 2 and forgotten == [True]  # the secret is re-read for the new grant


def test_a_second_401_is_a_store_error_without_a_loop() -> None:
    shop = Shopify()
    _, store = wired(shop)
    shop.token()
    shop.token()
    shop.api += [http_error(401), http_error(401)]
    with pytest.raises(StoreError, match="HTTP 401"):
        list(store.catalogue())
    assert len(shop.grants()) == 2 and len(shop.api_tokens()) == 2


def test_a_429_is_waited_out_for_its_retry_after() -> None:
    shop = Shopify()
    waits: list[float] = []
    tokens = AccessTokens(SHOP, lambda: CLIENT, opener=shop.open, clock=Clock())
    store = ShopifyStore(SHOP, tokens.token, opener=shop.open, sleep=waits.append)
    shop.token()
    shop.api += [
        http_error(429, {"errors": "Exceeded 2 calls per second"}, {"Retry-After": "2.0"}),
        FakeResponse(200, ONE_PAGE),
    ]
    assert [r.sku for r in store.catalogue()] == ["MAT-A"]
    assert waits == [2.0]


@pytest.mark.parametrize(
    "secret", ["shpat_legacy_admin_token", json.dumps({"access_token": "shpat_legacy_admin_token"})]
)
def test_a_legacy_static_token_is_used_as_is(secret: str) -> None:
    shop = Shopify()
    shop.api.append(FakeResponse(200, ONE_PAGE))
    tokens, store = wired(shop, secret=lambda: secret)
    list(store.catalogue())
    assert shop.grants() == [] and tokens.grants == 0
    assert shop.api_tokens() == ["shpat_legacy_admin_token"]


def test_refused_client_credentials_name_the_oauth_error() -> None:
    shop = Shopify()
    shop.token(http_error(400, {"error": "invalid_client", "error_description": "bad secret"}))
    _, store = wired(shop)
    with pytest.raises(StoreError, match="HTTP 400 invalid_client: bad secret"):
        list(store.catalogue())
    assert shop.api_tokens() == []  # nothing was asked of the Admin API


def test_a_token_answer_without_expiry_is_kept_one_hour_only() -> None:
    shop, clock = Shopify(), Clock()
    tokens = AccessTokens(SHOP, lambda: CLIENT, opener=shop.open, clock=clock)
    shop.token(FakeResponse(200, {"access_token": "shpat_a", "scope": "read_products"}))
    assert tokens.token() == "shpat_a"
    clock.now += 3600 - 300
    shop.token()
    assert tokens.token() == "shpat_1"


@pytest.mark.parametrize(
    ("secret", "message"),
    [("", "empty"), ("{not json", "not JSON"), ('{"client_id": "x"}', "client_id")],
)
def test_a_malformed_store_secret_is_refused_without_echoing_it(secret: str, message: str) -> None:
    with pytest.raises(StoreError, match=message) as caught:
        parse_store_secret(secret)
    assert "shpss" not in str(caught.value)


def test_webhooks_verify_with_the_apps_client_secret_plain_or_as_json(world: World) -> None:
    from handlers.common.aws_clients import client

    assert webhook_key(CLIENT) == "shpss_client_secret_0123"
    assert webhook_key(" shpss_plain ") == "shpss_plain"
    client("secretsmanager").put_secret_value(
        SecretId="dev-upsr-webhook-secret", SecretString=CLIENT
    )
    registry.restart()  # a new container reads the secret anew
    good = world.deliver(webhook_event(shopify_order(), secret="shpss_client_secret_0123"))
    assert good["statusCode"] == 200
    forged = webhook_event(shopify_order(order_id=99), secret="not-the-client-secret")
    assert world.deliver(forged)["statusCode"] == 401
    assert sign(b"x", "shpss_client_secret_0123") != sign(b"x", "other")


def test_the_sync_handler_mints_one_token_per_container(world: World) -> None:
    from handlers.common.aws_clients import client
    from handlers.common.clock import utc_now
    from handlers.upsell_recommender import contract, syncing

    client("secretsmanager").put_secret_value(SecretId="dev-upsr-store-key", SecretString=CLIENT)
    registry.restart()  # a new container reads the secret anew
    shop = Shopify()
    shop.token()
    shop.api += [FakeResponse(200, ONE_PAGE), FakeResponse(200, ONE_PAGE)]
    config = contract.CatalogSyncSettings.from_environ()
    deps = syncing.SyncDeps.from_settings(config, utc_now, opener=shop.open)
    assert syncing.run(deps, now=1_767_258_000)["written"] == 1
    assert syncing.run(deps, now=1_767_258_900)["newer_kept"] == 0
    assert len(shop.grants()) == 1 and shop.api_tokens() == ["shpat_1", "shpat_1"]
