"""The upsell recommender on moto: its five tables (real key schemas), queue, secrets, SES.

``world`` builds everything the six handlers touch in eu-west-2 and sets the environment the
infra would set, so handlers run in-process exactly as in Lambda. Bedrock and SMS are not
emulated by moto: the picker gets ``FakeBedrockClient`` and the sender ``RecordingMessenger``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from handlers.upsell_recommender import catalogue
from handlers.upsell_recommender.domain import CatalogueItem
from handlers.upsell_recommender.nudges import RecordingMessenger
from handlers.upsell_recommender.store import InMemoryStore
from testsupport.common import FakeBedrockClient

T0 = 1_767_258_000  # 2026-01-01 09:00 UTC: after the report hour in London
SHOP = "example-shop.myshopify.com"
WEBHOOK_SECRET = "shpss_test_webhook_signing_secret_0123456789"
STORE_KEY = "shpat_test_admin_api_token"
ADDLINK_KEYRING = json.dumps(
    {"active_kid": "k1", "keys": {"k1": "a" * 24 + "-addlink-key-for-tests"}}
)
ADDLINK_URL = "https://abc123.lambda-url.eu-west-2.on.aws/"
SENDER = "crm-bot@example.com"
OWNER = "owner@example.com"
PHONE = "+447700900123"
DELAY_S = 120 * 60
WINDOW_S = 72 * 3600

ENV = {
    "UPSR_ORDERS_TABLE": "dev-upsr-orders",
    "UPSR_OFFERS_TABLE": "dev-upsr-offers",
    "UPSR_OFFERS_INDEX": "state-send_at",
    "UPSR_CATALOGUE_TABLE": "dev-upsr-catalogue",
    "UPSR_CUSTOMERS_TABLE": "dev-upsr-customers",
    "UPSR_OPTOUT_TABLE": "dev-upsr-optout",
    "UPSR_STORE_DOMAIN": SHOP,
    "UPSR_ATTRIBUTION_WINDOW_HOURS": "72",
    "UPSR_OFFER_RETENTION_DAYS": "90",
    "UPSR_MAX_NUDGES_PER_30_DAYS": "2",
    "UPSR_WEBHOOK_SECRET_ID": "dev-upsr-webhook-secret",
    "UPSR_WEBHOOK_MAX_AGE_HOURS": "48",
    "UPSR_ORDER_TIMEOUT_S": "10",
    "UPSR_PICKER_MODEL_ID": "global.anthropic.claude-haiku-4-5-20251001-v1:0",
    "UPSR_NUDGE_DELAY_MINUTES": "120",
    "UPSR_MAX_PRICE_RATIO": "0.5",
    "UPSR_CATALOGUE_MAX_AGE_HOURS": "6",
    "UPSR_JOBS_MAX_RECEIVES": "5",
    "UPSR_ADDLINK_KEY_SECRET_ID": "dev-upsr-addlink-key",
    "UPSR_ADDLINK_URL": ADDLINK_URL,
    "UPSR_SMS_ORIGINATION_IDENTITY": (
        "arn:aws:sms-voice:eu-west-2:123456789012:pool/pool-0123456789abcdef0123456789abcdef"
    ),
    "UPSR_SENDER_EMAIL": SENDER,
    "UPSR_OWNER_EMAIL": OWNER,
    "UPSR_LINK_GRACE_DAYS": "14",
    "UPSR_REPORT_HOUR": "8",
    "UPSR_REPORT_TIMEZONE": "Europe/London",
    "UPSR_STORE_KEY_SECRET_ID": "dev-upsr-store-key",
    "UPSR_SHOPIFY_API_VERSION": "2026-10",
}


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
    """A Function URL event for a tap on the one-tap link."""
    return {
        "version": "2.0",
        "rawPath": "/",
        "headers": {"user-agent": agent},
        "queryStringParameters": {} if token is None else {"t": token},
        "requestContext": {"requestId": "req-2", "http": {"method": method}},
        "isBase64Encoded": False,
    }


def token_in(text: str) -> str:
    """The token of the one-tap link inside a nudge."""
    match = re.search(r"(https://\S+\?t=[A-Za-z0-9._-]+)", text)
    assert match, text
    return parse_qs(urlsplit(match.group(1)).query)["t"][0]


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

    def items(self, name: str) -> list[dict[str, Any]]:
        return list(self.tables[name].scan()["Items"])

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
        from handlers.upsell_recommender.order import OrderDeps

        return OrderDeps.from_env()

    def picker_deps(self) -> Any:
        from handlers.upsell_recommender.picker import PickerDeps

        return PickerDeps.from_env(model_client=self.bedrock)

    def sender_deps(self) -> Any:
        from handlers.upsell_recommender.sender import SenderDeps

        return SenderDeps.from_env(messenger=self.messenger)

    def addlink_deps(self) -> Any:
        from handlers.upsell_recommender.addlink import AddlinkDeps

        return AddlinkDeps.from_env()

    def sweep_deps(self) -> Any:
        from handlers.upsell_recommender.sweep import SweepDeps

        return SweepDeps.from_env(mail_owner=lambda s, t: self.owner_mail.append((s, t)))

    def sync_deps(self) -> Any:
        from handlers.upsell_recommender.catalog_sync import SyncDeps

        return SyncDeps.from_env(store=self.store)

    # Whole steps of the flow ---------------------------------------------------------------

    def sync(self, now: float = T0 - 300) -> dict[str, int]:
        from handlers.upsell_recommender import catalog_sync

        return catalog_sync.run(self.sync_deps(), now=now)

    def deliver(self, event: Mapping[str, Any], now: float = T0) -> dict[str, Any]:
        from handlers.upsell_recommender import order

        return order.handle(event, self.order_deps(), now=now)

    def pick_all(self, now: float = T0 + 5) -> list[str]:
        from handlers.upsell_recommender import picker

        deps = self.picker_deps()
        return [picker.process_record(r, deps, now=now).value for r in self.jobs()]

    def send(self, now: float) -> dict[str, int]:
        from handlers.upsell_recommender import sender

        return sender.run(self.sender_deps(), now=now)

    def tap(self, event: Mapping[str, Any], now: float) -> dict[str, Any]:
        from handlers.upsell_recommender import addlink

        return addlink.handle(event, self.addlink_deps(), now=now)

    def sweep(self, now: float) -> dict[str, Any]:
        from handlers.upsell_recommender import sweep

        return sweep.run(self.sweep_deps(), now=now)


@pytest.fixture
def upsr_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def world(aws: None, upsr_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """Every upsr resource on moto, named as in dev, with secrets set and SES verified."""
    from handlers.common.aws_clients import client, table

    dynamodb = client("dynamodb")

    def create(name: str, key: str, *, gsi: bool = False, ttl: str | None = None) -> Any:
        attributes = [{"AttributeName": key, "AttributeType": "S"}]
        extra: dict[str, Any] = {}
        if gsi:
            attributes += [
                {"AttributeName": "state", "AttributeType": "S"},
                {"AttributeName": "send_at", "AttributeType": "N"},
            ]
            extra["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": "state-send_at",
                    "KeySchema": [
                        {"AttributeName": "state", "KeyType": "HASH"},
                        {"AttributeName": "send_at", "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ]
        dynamodb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
            AttributeDefinitions=attributes,
            BillingMode="PAY_PER_REQUEST",
            **extra,
        )
        if ttl:
            dynamodb.update_time_to_live(
                TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl}
            )
        return table(name)

    tables = {
        "orders": create("dev-upsr-orders", "order_id"),
        "offers": create("dev-upsr-offers", "offer_id", gsi=True, ttl="expires_at"),
        "catalogue": create("dev-upsr-catalogue", "sku"),
        "customers": create("dev-upsr-customers", "customer_id"),
        "optout": create("dev-upsr-optout", "customer_id"),
    }
    sqs = client("sqs")
    dlq = sqs.create_queue(QueueName="dev-upsr-jobs-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue_url = sqs.create_queue(
        QueueName="dev-upsr-jobs",
        Attributes={
            "VisibilityTimeout": "360",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 5}),
        },
    )["QueueUrl"]
    monkeypatch.setenv("UPSR_JOBS_QUEUE_URL", queue_url)
    secrets = client("secretsmanager")
    secrets.create_secret(Name="dev-upsr-webhook-secret", SecretString=WEBHOOK_SECRET)
    secrets.create_secret(Name="dev-upsr-store-key", SecretString=STORE_KEY)
    secrets.create_secret(Name="dev-upsr-addlink-key", SecretString=ADDLINK_KEYRING)
    client("ses").verify_domain_identity(Domain="example.com")
    catalogue.forget_snapshots()
    try:
        yield World(tables, sqs, queue_url, InMemoryStore(SHOP, list(PRODUCTS)))
    finally:
        catalogue.forget_snapshots()
