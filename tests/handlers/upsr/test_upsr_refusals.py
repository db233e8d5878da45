"""What must never happen: forged or replayed webhooks and tampered links change nothing,
opted-out customers are never nudged, and a suggestion failing a catalogue filter never goes out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.handlers.upsr.conftest import (
    MAT,
    T0,
    World,
    product,
    shopify_order,
    sign,
    webhook_event,
)
from testsupport.metrics import count_metrics, emitted


def assert_nothing_written(world: World) -> None:
    assert world.items("orders") == []
    assert world.items("customers") == []
    assert world.items("offers") == []
    assert world.jobs() == []


# Forged and replayed webhooks -------------------------------------------------------------


def _forgeries() -> dict[str, dict[str, Any]]:
    body = json.dumps(shopify_order()).encode()
    other = json.dumps(shopify_order(order_id=9999)).encode()
    tampered = body.replace(b'"200.00"', b'"2.00"')
    return {
        "wrong secret": webhook_event(body, secret="not-the-shop-secret"),
        "no signature": webhook_event(body, omit_signature=True),
        "not base64": webhook_event(body, signature="%%%not-base64%%%"),
        "body changed after signing": webhook_event(tampered, signature=sign(body)),
        "signature replayed on another body": webhook_event(other, signature=sign(body)),
        "empty signature": webhook_event(body, signature=" "),
    }


@pytest.mark.parametrize("case", sorted(_forgeries()))
def test_forged_or_replayed_signature_is_refused_with_nothing_written(
    world: World, case: str
) -> None:
    answer = world.deliver(_forgeries()[case])
    assert answer["statusCode"] == 401
    assert json.loads(answer["body"])["error"]["code"] == "invalid_signature"
    assert_nothing_written(world)


def test_an_authentic_but_old_delivery_is_refused_as_a_replay(world: World) -> None:
    """Shopify signs no timestamp; the signed created_at bounds how long a capture works."""
    old = shopify_order(created_at=T0 - 49 * 3600)
    answer = world.deliver(webhook_event(old))
    assert answer["statusCode"] == 401
    assert json.loads(answer["body"])["error"]["code"] == "stale_webhook"
    assert_nothing_written(world)


def test_a_replay_inside_the_horizon_is_a_duplicate_and_writes_nothing_new(world: World) -> None:
    event = webhook_event(shopify_order())
    world.deliver(event)
    world.jobs()
    orders, customers = world.items("orders"), world.items("customers")
    answer = world.deliver(event, now=T0 + 3600)
    assert json.loads(answer["body"]) == {"status": "duplicate"}
    assert world.items("orders") == orders and world.items("customers") == customers
    assert world.jobs() == []


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"shop": "other-shop.myshopify.com"}, 403, "unknown_shop"),
        ({"topic": "orders/updated"}, 400, "unsupported_topic"),
        ({"method": "GET"}, 405, "method_not_allowed"),
    ],
)
def test_authentic_requests_for_something_else_are_refused_with_nothing_written(
    world: World, change: dict[str, Any], status: int, code: str
) -> None:
    answer = world.deliver(webhook_event(shopify_order(), **change))
    assert answer["statusCode"] == status
    assert json.loads(answer["body"])["error"]["code"] == code
    assert_nothing_written(world)


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[1, 2]", json.dumps({"id": "abc", "created_at": "yesterday"}).encode()],
)
def test_authentic_but_malformed_orders_get_400_with_nothing_written(
    world: World, body: bytes
) -> None:
    answer = world.deliver(webhook_event(body))
    assert answer["statusCode"] == 400
    assert_nothing_written(world)


def test_signature_is_checked_before_the_body_is_parsed(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handlers.upsell_recommender import orders

    def explode(*_: Any) -> Any:
        raise AssertionError("parsed an unauthenticated body")

    monkeypatch.setattr(orders, "parse_order", explode)  # the name the order path calls
    answer = world.deliver(webhook_event(b"{}", secret="forged"))
    assert answer["statusCode"] == 401


# Tampered links ---------------------------------------------------------------------------


# Opt-out ----------------------------------------------------------------------------------


def test_opted_out_customer_gets_no_job_and_no_nudge(world: World) -> None:
    world.sync()
    world.tables["optout"].put_item(Item={"customer_id": "7001", "opted_out_at": T0 - 10})
    answer = world.deliver(webhook_event(shopify_order()))
    assert json.loads(answer["body"]) == {"status": "accepted", "outcome": "opted-out"}
    assert world.jobs() == []
    assert world.items("customers") == []  # no purchase history kept for marketing either
    assert world.send(now=T0 + 10**6) == {}
    assert world.messenger.sent == []


def test_customer_opting_out_after_the_order_is_never_nudged(world: World) -> None:
    world.sync()
    world.deliver(webhook_event(shopify_order()))
    world.bedrock.add_tool_answer(MAT)
    world.pick_all()
    chosen = world.offer()
    assert chosen is not None and chosen["state"] == "chosen"
    world.tables["optout"].put_item(Item={"customer_id": "7001", "opted_out_at": T0 + 60})
    assert world.send(now=chosen["send_at"]) == {"suppressed:opted-out": 1}
    assert world.messenger.sent == []
    final = world.offer()
    assert final is not None
    assert (final["state"], final["suppressed_reason"]) == ("suppressed", "opted-out")
    assert world.send(now=chosen["send_at"] + 300) == {}


def test_capped_customer_gets_no_job(world: World) -> None:
    from handlers.upsell_recommender.customers import stamp_nudge

    world.sync()
    for days in (3, 10):
        assert stamp_nudge(world.tables["customers"], "7001", T0 - days * 86400, 2)
    answer = world.deliver(webhook_event(shopify_order()))
    assert json.loads(answer["body"])["outcome"] == "capped"
    assert world.jobs() == []


# Catalogue filters ------------------------------------------------------------------------


def _pick_with(world: World, suggestions: list[dict[str, str]], **order: Any) -> str:
    world.deliver(webhook_event(shopify_order(**order)))
    world.bedrock.add_tool_answer({"suggestions": suggestions})
    [outcome] = world.pick_all()
    return outcome


@pytest.mark.parametrize(
    ("sku", "reason"),
    [
        ("LANTERN-1", "out-of-stock"),
        ("STOVE-1", "not-complementary"),
        ("MAT-PRO", "price"),
        ("TENT-2P", "already-owned"),
        ("GHOST-404", "unknown-sku"),
    ],
)
def test_a_suggestion_failing_a_filter_is_never_sent(world: World, sku: str, reason: str) -> None:
    world.sync()
    assert _pick_with(world, [{"sku": sku, "line": "Buy this!"}]) == "no-fit"
    offer = world.offer()
    assert offer is not None
    assert (offer["state"], offer["reason"]) == ("no-fit", "filters-rejected")
    assert offer["rejected"] == {sku: reason}
    assert "contact" not in offer
    assert world.send(now=T0 + 10**6) == {}
    assert world.messenger.sent == []


def test_an_item_bought_before_is_not_suggested_again(world: World) -> None:
    """History (from earlier orders) counts as owned: neither offered to the model nor accepted."""
    world.store.products.append(product("LANTERN-2", "lanterns", "20.00", variant="3002"))
    world.sync()
    world.tables["customers"].put_item(
        Item={"customer_id": "7001", "owned_skus": {"MAT-1"}, "last_order_at": T0 - 86400}
    )
    assert _pick_with(world, [{"sku": "MAT-1", "line": "Comfy."}]) == "no-fit"
    prompt = world.bedrock.calls[0]["messages"][0]["content"][0]["text"]
    assert "LANTERN-2" in prompt and "MAT-1" not in prompt
    offer = world.offer()
    assert offer is not None and offer["rejected"] == {"MAT-1": "already-owned"}


def test_the_first_suggestion_that_passes_every_filter_is_chosen(world: World) -> None:
    world.sync()
    suggestions = [
        {"sku": "STOVE-1", "line": "Cook outdoors."},
        {"sku": "LANTERN-1", "line": "Light."},
        {"sku": "MAT-1", "line": "Sleep well on it."},
    ]
    assert _pick_with(world, suggestions) == "chosen"
    offer = world.offer()
    assert offer is not None and offer["sku"] == "MAT-1"
    assert offer["rejected"] == {"STOVE-1": "not-complementary", "LANTERN-1": "out-of-stock"}


def test_a_product_that_sold_out_after_the_candidate_list_is_not_sent(world: World) -> None:
    """The candidate snapshot is cached; the shortlist is re-read before the offer is written."""
    from handlers.upsell_recommender.catalogue import snapshot

    world.sync()
    snapshot(world.tables["catalogue"], T0)  # the warm container's cached candidate list
    world.store.replace(
        [
            p if p.sku != "MAT-1" else p.__class__(**{**p.__dict__, "stock": 0})
            for p in world.store.products
        ]
    )
    world.sync(now=T0 + 1)
    assert _pick_with(world, [{"sku": "MAT-1", "line": "Comfy."}]) == "no-fit"
    offer = world.offer()
    assert offer is not None and offer["rejected"] == {"MAT-1": "out-of-stock"}


def test_a_stale_catalogue_offers_nothing_and_skips_the_model(world: World) -> None:
    world.sync(now=T0 - 7 * 3600)
    world.deliver(webhook_event(shopify_order()))
    assert world.pick_all() == ["no-fit"]
    assert world.bedrock.calls == []
    offer = world.offer()
    assert offer is not None and offer["reason"] == "no-candidates"


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (lambda b: b.add_text_answer("I think the mat."), "model-no_tool_use"),
        (lambda b: b.add_tool_answer({"suggestions": "MAT-1"}), "model-schema_violation"),
        (lambda b: b.add_tool_answer({"suggestions": []}), "model-empty"),
        (lambda b: b.add_tool_answer({"picks": ["MAT-1"]}), "model-schema_violation"),
    ],
)
def test_a_bad_or_empty_model_answer_ends_in_no_fit(world: World, script: Any, reason: str) -> None:
    world.sync()
    world.deliver(webhook_event(shopify_order()))
    script(world.bedrock)
    assert world.pick_all() == ["no-fit"]
    offer = world.offer()
    assert offer is not None and (offer["state"], offer["reason"]) == ("no-fit", reason)
    assert world.send(now=T0 + 10**6) == {}


def test_a_throttled_model_is_retried_by_sqs_then_ends_in_no_fit(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handlers.upsell_recommender import suggesting

    monkeypatch.setattr("handlers.common.model_call.time.sleep", lambda _s: None)
    world.sync()
    world.deliver(webhook_event(shopify_order()))
    [job] = world.jobs()
    deps = world.picker_deps()
    world.bedrock.throttle(4)
    with pytest.raises(suggesting.ModelUnavailable):
        suggesting.process_record(job, deps, now=T0 + 5)
    assert world.offer() is None
    last = {**job, "attributes": {"ApproximateReceiveCount": "5"}}
    world.bedrock.throttle(4)
    assert suggesting.process_record(last, deps, now=T0 + 600) == suggesting.PickOutcome.NO_FIT
    offer = world.offer()
    assert offer is not None and offer["reason"] == "model-unavailable"


def test_a_line_with_a_link_is_replaced_before_it_reaches_the_customer(world: World) -> None:
    world.sync()
    pitch = "Get it cheaper at www.evil-deals.com now"
    assert _pick_with(world, [{"sku": "MAT-1", "line": pitch}]) == "chosen"
    offer = world.offer()
    assert offer is not None
    world.send(now=offer["send_at"])
    [nudge] = world.messenger.sent
    assert "evil" not in nudge.text  # the SMS has room for no pitch beside its link
    assert offer["line"] == "Mat 1 goes well with your order."


# make verify's check ----------------------------------------------------------------------


def _checked(event: dict[str, Any]) -> dict[str, Any]:
    return {**event, "headers": {**event["headers"], "x-crm-check": "1"}}


def test_a_check_mark_alone_skips_no_signature_check(world: World) -> None:
    answer = world.deliver(_checked(webhook_event(shopify_order(), secret="not-the-shop-secret")))
    assert answer["statusCode"] == 401
    assert_nothing_written(world)


def test_a_check_order_is_marked_and_never_reaches_its_customer(world: World) -> None:
    """Even an order naming a consenting customer: a check writes its marker only."""
    answer = world.deliver(_checked(webhook_event(shopify_order())))
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["check"] is True
    [marker] = world.items("orders")
    assert marker["check"] is True and marker["job_state"] == "none" and "customer_id" not in marker
    assert world.jobs() == [] and world.items("customers") == []


def test_a_check_order_counts_in_no_business_metric(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """make verify's order: no ``Orders`` (nor any other upsr metric); a real order: one."""
    count_metrics(monkeypatch)
    world.sync()
    capsys.readouterr()

    def counted() -> list[tuple[str, float]]:
        return [(name, value) for name, value, _ in emitted(capsys.readouterr().out, service="upsr")]

    assert world.deliver(_checked(webhook_event(shopify_order(5001))))["statusCode"] == 200
    assert counted() == []
    assert world.deliver(webhook_event(shopify_order(5002)))["statusCode"] == 200
    assert counted() == [("Orders", 1.0)]
