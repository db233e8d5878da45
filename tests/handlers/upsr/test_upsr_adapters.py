"""Adapters and entry points: Shopify Admin API, the messenger, the catalogue upsert, the cap,
and each scheduled or queued handler run from its environment."""

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

from handlers.upsell_recommender.domain import Channel, Contact
from handlers.upsell_recommender.nudges import AwsMessenger, Nudge, NudgeRejected, compose
from handlers.upsell_recommender.shopify import DEFAULT_API_VERSION, ShopifyStore, catalogue_rows
from handlers.upsell_recommender.store import StoreAuthError, StoreError
from tests.handlers.upsr.conftest import SENDER, SHOP, T0, World, at, shopify_order, webhook_event

# Shopify Admin API ------------------------------------------------------------------------


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


class FakeResponse(io.BytesIO):
    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(json.dumps(body).encode())
        self.status = status
        self.headers = headers or {}

    def __enter__(self) -> FakeResponse:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


def opener(answers: list[Any], seen: list[Any]) -> Callable[[Any, float], Any]:
    def open_(request: Any, timeout: float) -> Any:
        seen.append(request)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return open_


def page(products: list[dict[str, Any]], cursor: str | None) -> dict[str, Any]:
    return {
        "data": {
            "products": {
                "pageInfo": {"hasNextPage": cursor is not None, "endCursor": cursor},
                "nodes": products,
            }
        }
    }


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


# Messenger --------------------------------------------------------------------------------


def test_sms_goes_through_end_user_messaging_from_the_configured_identity(aws: None) -> None:
    from botocore.stub import Stubber

    from handlers.common.aws_clients import client

    sms = client("pinpoint-sms-voice-v2")
    identity = "arn:aws:sms-voice:eu-west-2:123456789012:pool/pool-abc"
    nudge = compose(Contact(Channel.SMS, "+447700900123", "Ann"), "Mat", "Comfy.", "https://l/?t=x")
    with Stubber(sms) as stub:
        stub.add_response(
            "send_text_message",
            {"MessageId": "m-1"},
            {
                "DestinationPhoneNumber": "+447700900123",
                "OriginationIdentity": identity,
                "MessageBody": nudge.text,
                "MessageType": "PROMOTIONAL",
            },
        )
        stub.add_client_error("send_text_message", "ConflictException", "opted out")
        messenger = AwsMessenger(
            origination_identity=identity, sender_email=SENDER, sms_client=lambda: sms
        )
        assert messenger.send(nudge) == "m-1"
        with pytest.raises(NudgeRejected, match="sms:ConflictException"):
            messenger.send(nudge)


def test_email_nudge_goes_through_ses_from_the_sender(aws: None) -> None:
    from moto.ses.models import ses_backends

    from handlers.common.aws_clients import client

    client("ses").verify_domain_identity(Domain="example.com")
    messenger = AwsMessenger(origination_identity="pool/x", sender_email=SENDER)
    nudge = compose(Contact(Channel.EMAIL, "ann@example.com"), "Mat", "Comfy.", "https://l/?t=x")
    assert messenger.send(nudge)
    [message] = ses_backends["123456789012"]["eu-west-2"].sent_messages
    assert message.source == SENDER and message.destinations["ToAddresses"] == ["ann@example.com"]
    assert "Hi," in nudge.text and "Reply to this email" in nudge.text
    assert nudge.text == (  # the plain-text part is kept as it was
        "Hi,\n\nThanks for your order! Comfy.\n\nAdd Mat to your cart in one tap:\n"
        "https://l/?t=x\n\nNot interested in suggestions like this? Reply to this email and "
        "we will stop.\n"
    )
    # moto keeps the HTML part when there is one: the button says what it does.
    assert "data-primary" in message.body and ">Add Mat to your cart</a>" in message.body
    assert "href='https://l/?t=x'" in message.body and "<html lang=en>" in message.body


def test_a_timeout_is_not_a_rejection() -> None:
    def broken() -> Any:
        raise TimeoutError("read timeout")

    messenger = AwsMessenger(
        origination_identity="pool/x", sender_email=SENDER, sms_client=lambda: broken()
    )
    with pytest.raises(TimeoutError):
        messenger.send(Nudge(Contact(Channel.SMS, "+447700900123"), "s", "t"))


# Tables -----------------------------------------------------------------------------------


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


def test_history_is_added_idempotently_and_never_touches_the_cap(world: World) -> None:
    from handlers.upsell_recommender.customers import record_purchase, stamp_nudge

    table = world.tables["customers"]
    assert stamp_nudge(table, "c1", T0, 2)
    for _ in range(2):
        record_purchase(table, "c1", ["A", "B"], T0)
    item = table.get_item(Key={"customer_id": "c1"})["Item"]
    assert item["owned_skus"] == {"A", "B"} and item["nudge_count"] == 1
    assert stamp_nudge(table, "c1", T0 + 1, 2) and not stamp_nudge(table, "c1", T0 + 2, 2)


def test_a_stamp_losing_every_attempt_counts_as_capped(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer bumps the version between each read and write: no nudge is counted."""
    from handlers.upsell_recommender import customers

    table = world.tables["customers"]
    customers.stamp_nudge(table, "c2", T0, 5)
    original = table.get_item

    def racing_get(**kwargs: Any) -> Any:
        answer = original(**kwargs)
        table.update_item(
            Key={"customer_id": "c2"},
            UpdateExpression="ADD cap_version :one",
            ExpressionAttributeValues={":one": 1},
        )
        return answer

    monkeypatch.setattr(table, "get_item", racing_get)
    assert not customers.stamp_nudge(table, "c2", T0 + 1, 5)


# Entry points -----------------------------------------------------------------------------


def _fresh_module(name: str, **collaborators: Any) -> Any:
    import importlib

    from handlers.common.entry import registry

    module = importlib.import_module(f"handlers.upsell_recommender.functions.{name}")
    registry.override(module, clock=lambda: at(T0 + 10**4), **collaborators)
    return module


class Context:
    aws_request_id = "req"
    function_name = "dev-upsr-picker"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def test_picker_handler_reports_only_the_bad_record_as_failed(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.sync()
    world.deliver(webhook_event(shopify_order()))
    [good] = world.jobs()
    bad = {**good, "messageId": "m-bad", "body": '{"kind": "suggest"}'}
    world.bedrock.add_tool_answer({"suggestions": [{"sku": "MAT-1", "line": "Comfy."}]})
    picker = _fresh_module("picker", model_client=world.bedrock)
    answer = picker.handler({"Records": [good, bad]}, Context())
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-bad"}]}
    offer = world.offer()
    assert offer is not None and offer["state"] == "chosen"


def test_scheduled_handlers_run_from_their_environment(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    sync = _fresh_module("catalog_sync", store=world.store)
    assert sync.handler({}, Context())["written"] == 6
    sender = _fresh_module("sender", messenger=world.messenger)
    assert sender.handler({}, Context()) == {}
    sweep = _fresh_module("sweep", mail_owner=lambda m: world.owner_mail.append((m.subject, m.text)))
    assert sweep.handler({}, Context()) == {
        "closed": 0,
        "already_closed": 0,
        "reported": True,
        "unconfirmed": 0,
    }


def test_sender_refuses_offers_it_cannot_deliver(world: World) -> None:
    from handlers.upsell_recommender import sending

    deps = world.sender_deps()
    keyring = deps.keyring()
    base = {"customer_id": "7001", "variant_id": "2001", "title": "Mat", "line": "x"}
    offers = {
        "o-no-contact": {**base, "contact": {"channel": "sms", "address": "not-a-phone"}},
        "o-bad-variant": {
            **base,
            "variant_id": "../evil",
            "contact": {"channel": "sms", "address": "+447700900123"},
        },
    }
    for offer_id, item in offers.items():
        world.tables["offers"].put_item(
            Item={"offer_id": offer_id, "state": "chosen", "send_at": T0, **item}
        )
    outcomes = [
        sending.send_one({"offer_id": o, **item}, deps, keyring, now=T0)
        for o, item in offers.items()
    ]
    assert outcomes == ["suppressed:no-contact", "suppressed:bad-offer"]
    assert world.messenger.sent == []


def test_sender_fails_before_claiming_anything_when_the_key_is_missing(world: World) -> None:
    from handlers.upsell_recommender import sending

    world.sync()
    world.deliver(webhook_event(shopify_order()))
    world.bedrock.add_tool_answer({"suggestions": [{"sku": "MAT-1", "line": "Comfy."}]})
    world.pick_all()

    def missing() -> Any:
        raise RuntimeError("secret has no value")

    deps = replace(world.sender_deps(), keyring=missing)
    with pytest.raises(RuntimeError):
        sending.run(deps, now=T0 + 10**4)
    offer = world.offer()
    assert offer is not None and offer["state"] == "chosen"


def test_an_unknown_time_zone_falls_back_to_utc() -> None:
    from handlers.upsell_recommender.sweeping import local_time

    assert local_time(T0, "Mars/Olympus").utcoffset() is not None
    assert local_time(T0, "Europe/London").hour == 9
