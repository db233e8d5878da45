"""The upsell recommender's scenario on the dev stack's moto world (tests/handlers/conftest.py).

``world`` sets the environment the graph gives the six functions, so handlers run in-process
exactly as in Lambda, and adds this scenario's secrets and catalogue. Bedrock and SMS are not
emulated by moto: the picker gets ``FakeBedrockClient`` and the sender ``RecordingMessenger``.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import io
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest

from handlers.common.function_url import Request
from handlers.upsell_recommender import contract
from handlers.upsell_recommender.domain import CatalogueItem
from tests.handlers.conftest import FunctionEnv
from testsupport.common import FakeBedrockClient
from testsupport.upsr import InMemoryStore, RecordingMessenger

T0 = 1_767_258_000  # 2026-01-01 09:00 UTC: after the report hour in London


def at(seconds: float) -> dt.datetime:
    """Unix seconds as the aware UTC time the one clock gives (``entry.registry``)."""
    return dt.datetime.fromtimestamp(seconds, dt.UTC)
SHOP = "example-shop.myshopify.com"
WEBHOOK_SECRET = "shpss_test_webhook_signing_secret_0123456789"
STORE_KEY = "shpat_test_admin_api_token"
ADDLINK_KEYRING = json.dumps(
    {"active_kid": "k1", "keys": {"k1": "a" * 24 + "-addlink-key-for-tests"}}
)
FORGET_SALT = "upsr-test-forget-salt-" + "s" * 40
SENDER = "crm-bot@example.com"
OWNER = "ops@example.com"  # the dev stack's (Pulumi.dev.yaml)
PHONE = "+447700900123"
DELAY_S = 120 * 60
WINDOW_S = 72 * 3600

def product(
    sku: str,
    category: str,
    price: str,
    *,
    complements: Sequence[str] = (),
    stock: int | None = 10,
    available: bool = True,
    variant: str | None = None,
) -> CatalogueItem:
    """A catalogue row as the store port yields it."""
    number = variant or str(int(hashlib.sha256(sku.encode()).hexdigest()[:10], 16))
    return CatalogueItem(
        sku=sku,
        variant_id=number,
        product_id=str(int(number) // 10),
        title=sku.replace("-", " ").title(),
        category=category,
        complements=frozenset(complements),
        price=Decimal(price),
        stock=stock,
        available=available,
    )


PRODUCTS = [
    product(
        "TENT-2P", "tents", "200.00", complements=("sleeping-mats", "lanterns"), variant="1001"
    ),
    product("MAT-1", "sleeping-mats", "40.00", complements=("tents",), variant="2001"),
    product("MAT-PRO", "sleeping-mats", "150.00", variant="2002"),
    product("LANTERN-1", "lanterns", "25.00", stock=0, variant="3001"),
    product("STOVE-1", "stoves", "60.00", variant="4001"),
    product("PEG-SET", "accessories", "8.00", variant="5001"),
]


def shopify_order(
    order_id: int = 5001,
    *,
    customer_id: int | None = 7001,
    skus: Sequence[tuple[str, str]] = (("TENT-2P", "200.00"),),
    created_at: float = T0 - 60,
    sms: bool = True,
    email_consent: bool = False,
    phone: str | None = PHONE,
    email: str | None = "ann@example.com",
) -> dict[str, Any]:
    """An orders/create payload shaped like Shopify's (only the fields read, plus noise)."""
    import datetime as dt

    created = dt.datetime.fromtimestamp(created_at, dt.UTC).isoformat()
    lines = [
        {
            "id": 9000 + i,
            "sku": sku,
            "variant_id": 1000 + i,
            "title": sku.title(),
            "quantity": 1,
            "price": price,
            "vendor": "noise",
        }
        for i, (sku, price) in enumerate(skus)
    ]
    subtotal = sum((Decimal(p) for _, p in skus), Decimal(0))
    order: dict[str, Any] = {
        "id": order_id,
        "name": f"#{order_id}",
        "created_at": created,
        "currency": "GBP",
        "subtotal_price": str(subtotal),
        "total_price": str(subtotal + 5),
        "line_items": lines,
        "email": email,
        "test": False,
    }
    if customer_id is not None:
        order["customer"] = {
            "id": customer_id,
            "first_name": "Ann",
            "email": email,
            "phone": phone,
            "sms_marketing_consent": {"state": "subscribed" if sms else "not_subscribed"},
            "email_marketing_consent": {
                "state": "subscribed" if email_consent else "not_subscribed"
            },
        }
    return order


def sign(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def webhook_event(
    body: bytes | Mapping[str, Any],
    *,
    signature: str | None = None,
    omit_signature: bool = False,
    secret: str = WEBHOOK_SECRET,
    topic: str = "orders/create",
    shop: str = SHOP,
    method: str = "POST",
) -> dict[str, Any]:
    """A Function URL (payload 2.0) event carrying a Shopify webhook delivery."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {
        "content-type": "application/json",
        "x-shopify-topic": topic,
        "x-shopify-shop-domain": shop,
        "x-shopify-webhook-id": "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
    }
    if not omit_signature:
        headers["x-shopify-hmac-sha256"] = signature or sign(raw, secret)
    return {
        "version": "2.0",
        "rawPath": "/",
        "headers": headers,
        "requestContext": {"requestId": "req-1", "http": {"method": method, "sourceIp": "1.2.3.4"}},
        "body": raw.decode(),
        "isBase64Encoded": False,
    }


def tap_event(
    token: str | None, *, method: str = "GET", agent: str = "Mozilla/5.0 (iPhone)"
) -> dict[str, Any]:
    """A Function URL event for a tap on the one-tap link: a short token in the path, a full
    (``v1.``) token of a link sent before in ``?t=``."""
    long = token is not None and token.startswith("v1.")
    return {
        "version": "2.0",
        "rawPath": "/" if long or token is None else f"/{token}",
        "headers": {"user-agent": agent},
        "queryStringParameters": {"t": token} if long else {},
        "requestContext": {"requestId": "req-2", "http": {"method": method}},
        "isBase64Encoded": False,
    }


def token_in(text: str) -> str:
    """The short token of the one-tap link inside a nudge (the link's path)."""
    match = re.search(r"https://[^/\s]+/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)(?=\s|$)", text)
    assert match, text
    return match.group(1)


@dataclass
class World:
    """Handles on the moto resources and the fakes."""

    tables: dict[str, Any]
    sqs: Any
    queue_url: str
    store: InMemoryStore
    bedrock: FakeBedrockClient = field(default_factory=FakeBedrockClient)
    messenger: RecordingMessenger = field(default_factory=RecordingMessenger)
    owner_mail: list[tuple[str, str]] = field(default_factory=list)
    alert_mail: list[tuple[str, str]] = field(default_factory=list)

    def items(self, name: str) -> list[dict[str, Any]]:
        """The table's business items: the day's spend counters (``spend#``) left out."""
        return [
            item for item in self.tables[name].scan()["Items"]
            if not str(item.get("offer_id", "")).startswith("spend#")
        ]

    def offer(self, order_id: int | str = 5001) -> dict[str, Any] | None:
        item = self.tables["offers"].get_item(Key={"offer_id": f"ofr-{order_id}"}).get("Item")
        return None if item is None else dict(item)

    def jobs(self) -> list[dict[str, Any]]:
        """Drain upsr-jobs as Lambda SQS records (receive count included)."""
        records: list[dict[str, Any]] = []
        while True:
            answer = self.sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=10,
                AttributeNames=["All"],
                WaitTimeSeconds=0,
            )
            messages = answer.get("Messages", [])
            if not messages:
                return records
            for m in messages:
                records.append(
                    {
                        "messageId": m["MessageId"],
                        "receiptHandle": m["ReceiptHandle"],
                        "body": m["Body"],
                        "attributes": m.get("Attributes", {}),
                        "eventSource": "aws:sqs",
                    }
                )
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])

    def order_deps(self) -> Any:
        from handlers.upsell_recommender.orders import OrderDeps

        return OrderDeps.from_settings(contract.OrderSettings.from_environ())

    def picker_deps(self, now: float = T0 + 5) -> Any:
        """As upsr-picker's composition root wires them (a refused model is noted)."""
        from handlers.upsell_recommender.functions import picker

        config = contract.PickerSettings.from_environ()
        return picker.wire(config, lambda: at(now), model_client=self.bedrock)

    def sender_deps(self, now: float = T0) -> Any:
        from handlers.upsell_recommender.sending import SenderDeps

        config = contract.SenderSettings.from_environ()
        return SenderDeps.from_settings(config, messenger=self.messenger, clock=lambda: at(float(now)))

    def addlink_deps(self) -> Any:
        from handlers.upsell_recommender.taps import AddlinkDeps

        return AddlinkDeps.from_settings(contract.AddlinkSettings.from_environ())

    def sweep_deps(self) -> Any:
        from handlers.upsell_recommender.sweeping import SweepDeps

        config = contract.SweepSettings.from_environ()
        return SweepDeps.from_settings(config, mail_owner=lambda m: self.owner_mail.append((m.subject, m.text)),
                                       mail_alert=lambda m: self.alert_mail.append((m.subject, m.text)))

    def sync_deps(self) -> Any:
        from handlers.common.clock import utc_now
        from handlers.upsell_recommender.syncing import SyncDeps

        config = contract.CatalogSyncSettings.from_environ()
        return SyncDeps.from_settings(config, utc_now, store=self.store)

    # Whole steps of the flow ---------------------------------------------------------------

    def sync(self, now: float = T0 - 300) -> dict[str, int]:
        from handlers.upsell_recommender import syncing

        return syncing.run(self.sync_deps(), now=now)

    def deliver(self, event: Mapping[str, Any], now: float = T0) -> dict[str, Any]:
        from handlers.upsell_recommender import orders

        return orders.handle(Request.read(event), self.order_deps(), now=now)

    def pick_all(self, now: float = T0 + 5) -> list[str]:
        from handlers.upsell_recommender import suggesting

        deps = self.picker_deps(now)
        return [suggesting.process_record(r, deps, now=now).value for r in self.jobs()]

    def send(self, now: float) -> dict[str, int]:
        from handlers.upsell_recommender import sending

        return sending.run(self.sender_deps(now), now=now)

    def tap(self, event: Mapping[str, Any], now: float) -> dict[str, Any]:
        from handlers.upsell_recommender import taps

        return taps.handle(Request.read(event), self.addlink_deps(), now=now)

    def sweep(self, now: float) -> dict[str, Any]:
        from handlers.upsell_recommender import sweeping

        return sweeping.run(self.sweep_deps(), now=now)


@pytest.fixture
def world(function_env: FunctionEnv) -> Iterator[World]:
    """upsr on the dev stack's moto world, every upsr function's environment from the graph,
    and this scenario's secrets and catalogue."""
    from handlers.common.aws_clients import client, table

    env = function_env(
        "upsr-order", "upsr-picker", "upsr-sender", "upsr-addlink", "upsr-sweep",
        "upsr-catalog-sync", "upsr-compliance",
    )
    tables = {
        name: table(env[variable])
        for name, variable in (
            ("orders", "ORDERS_TABLE"),
            ("offers", "OFFERS_TABLE"),
            ("catalogue", "CATALOGUE_TABLE"),
            ("customers", "CUSTOMERS_TABLE"),
            ("optout", "OPTOUT_TABLE"),
        )
    }
    secrets = client("secretsmanager")
    for variable, value in (
        ("WEBHOOK_SECRET_ID", WEBHOOK_SECRET),
        ("STORE_KEY_SECRET_ID", STORE_KEY),
        ("ADDLINK_KEY_SECRET_ID", ADDLINK_KEYRING),
        ("FORGET_SALT_SECRET_ID", FORGET_SALT),
    ):
        secrets.put_secret_value(SecretId=env[variable], SecretString=value)
    # The catalogue snapshot is forgotten around each test with the rest (aws_env).
    yield World(tables, client("sqs"), env["JOBS_QUEUE_URL"], InMemoryStore(SHOP, list(PRODUCTS)))


# Shared by the function tests ------------------------------------------------------------

MAT = {"suggestions": [{"sku": "MAT-1", "line": "A mat for the tent."}]}


def order_to_chosen_offer(world: World, suggestion: str = "MAT-1") -> dict[str, Any]:
    world.sync()
    answer = world.deliver(webhook_event(shopify_order()))
    assert answer["statusCode"] == 200, answer
    world.bedrock.add_tool_answer(
        {"suggestions": [{"sku": suggestion, "line": "A mat makes the tent twice as comfy."}]}
    )
    assert world.pick_all() == ["chosen"]
    offer = world.offer()
    assert offer is not None
    return offer


class FakeResponse(io.BytesIO):
    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(json.dumps(body).encode())
        self.status = status
        self.headers = headers or {}

    def __enter__(self) -> FakeResponse:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


def gql_product(
    pid: int, *, sku: str, tags: list[str], qty: int = 3, tracked: bool = True
) -> dict[str, Any]:
    return {
        "id": f"gid://shopify/Product/{pid}",
        "title": f"Product {pid}",
        "productType": "Sleeping-Mats",
        "tags": tags,
        "status": "ACTIVE",
        "variants": {
            "pageInfo": {"hasNextPage": False},
            "nodes": [
                {
                    "id": f"gid://shopify/ProductVariant/{pid}1",
                    "sku": sku,
                    "title": "Default Title",
                    "price": "19.50",
                    "availableForSale": True,
                    "inventoryQuantity": qty,
                    "inventoryItem": {"tracked": tracked},
                },
                {
                    "id": f"gid://shopify/ProductVariant/{pid}2",
                    "sku": "",
                    "title": "No SKU",
                    "price": "1.00",
                    "availableForSale": True,
                    "inventoryQuantity": 1,
                    "inventoryItem": {"tracked": True},
                },
            ],
        },
    }


def page(products: list[dict[str, Any]], cursor: str | None) -> dict[str, Any]:
    return {
        "data": {
            "products": {
                "pageInfo": {"hasNextPage": cursor is not None, "endCursor": cursor},
                "nodes": products,
            }
        }
    }


def chosen_offer(world: World) -> dict[str, Any]:
    """An order taken to a chosen offer (the model suggests ``MAT``); returns the offer."""
    world.sync()
    world.deliver(webhook_event(shopify_order()))
    world.bedrock.add_tool_answer(MAT)
    world.pick_all()
    chosen = world.offer()
    assert chosen is not None
    return chosen


def sent_offer(world: World) -> dict[str, Any]:
    """An order taken all the way to a sent offer; returns the offer."""
    chosen = chosen_offer(world)
    world.send(now=chosen["send_at"])
    offer = world.offer()
    assert offer is not None and offer["state"] == "sent"
    return offer
