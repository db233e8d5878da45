"""The whole upsell flow on moto, from the Shopify webhook to the tap and the owner's roll-up."""

from __future__ import annotations

import json

import pytest

from handlers.common.entry import registry
from tests.handlers.upsr.conftest import (
    DELAY_S,
    PHONE,
    SHOP,
    T0,
    WINDOW_S,
    World,
    at,
    shopify_order,
    tap_event,
    token_in,
    webhook_event,
)


def test_webhook_to_tap_to_rollup(world: World) -> None:
    assert world.sync() == {
        "written": 6, "unchanged": 0, "delisted": 0, "newer_kept": 0, "duplicate_skus": 0
    }

    answer = world.deliver(webhook_event(shopify_order()))
    assert answer["statusCode"] == 200
    assert json.loads(answer["body"]) == {"status": "accepted", "outcome": "eligible"}
    order = world.tables["orders"].get_item(Key={"order_id": "5001"})["Item"]
    assert (order["outcome"], order["job_state"]) == ("eligible", "enqueued")

    world.bedrock.add_tool_answer(
        {"suggestions": [{"sku": "MAT-1", "line": "A mat makes the tent twice as comfy."}]}
    )
    assert world.pick_all() == ["chosen"]
    assert len(world.bedrock.calls) == 1
    prompt = world.bedrock.calls[0]["messages"][0]["content"][0]["text"]
    assert "MAT-1" in prompt and PHONE not in prompt and "Ann" not in prompt
    offer = world.offer()
    assert offer is not None
    assert offer["state"] == "chosen" and offer["sku"] == "MAT-1"
    assert offer["send_at"] == T0 + 5 + DELAY_S

    assert world.send(now=T0 + 60) == {}  # not due yet
    assert world.messenger.sent == []
    assert world.send(now=T0 + 5 + DELAY_S) == {"sent": 1}
    [nudge] = world.messenger.sent
    assert nudge.contact.address == PHONE
    assert "Hi Ann," in nudge.text and "Reply STOP" in nudge.text
    offer = world.offer()
    assert offer is not None and offer["state"] == "sent"
    customer = world.tables["customers"].get_item(Key={"customer_id": "7001"})["Item"]
    assert customer["nudge_count"] == 1 and "TENT-2P" in customer["owned_skus"]

    tapped_at = T0 + DELAY_S + 3600
    redirect = world.tap(tap_event(token_in(nudge.text)), now=tapped_at)
    assert redirect["statusCode"] == 302
    assert redirect["headers"]["location"] == f"https://{SHOP}/cart/2001:1"
    offer = world.offer()
    assert offer is not None and (offer["state"], offer["tapped_at"]) == ("taken", tapped_at)

    summary = world.sweep(now=T0 + DELAY_S + WINDOW_S + 7200)
    assert summary["closed"] == 0 and summary["reported"] is True
    offer = world.offer()
    assert offer is not None and offer["state"] == "taken"
    [(subject, text)] = world.owner_mail
    assert subject.startswith("Upsell: 1 add-on taken (") and subject.endswith("from 1 order nudged since the last roll-up")
    assert "  Add-ons taken (tapped in time): 1 (running total: 1)" in text and "  Value of add-ons taken: £" in text


def test_email_only_customer_is_nudged_by_email(world: World) -> None:
    world.sync()
    world.deliver(webhook_event(shopify_order(sms=False, email_consent=True)))
    world.bedrock.add_tool_answer({"suggestions": [{"sku": "MAT-1", "line": "Comfy nights."}]})
    world.pick_all()
    offer = world.offer()
    assert offer is not None
    world.send(now=offer["send_at"])
    [nudge] = world.messenger.sent
    assert nudge.contact.channel.value == "email"
    assert nudge.contact.address == "ann@example.com"


def test_customer_without_marketing_consent_gets_no_job(world: World) -> None:
    world.sync()
    answer = world.deliver(webhook_event(shopify_order(sms=False, email_consent=False)))
    assert json.loads(answer["body"])["outcome"] == "no-consent"
    assert world.jobs() == []


@pytest.mark.parametrize("handler_module", ["order", "addlink"])
def test_public_entry_points_run_from_env(
    world: World, handler_module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``handler(event, context)`` builds its dependencies from the environment alone."""
    import importlib

    module = importlib.import_module(f"handlers.upsell_recommender.functions.{handler_module}")
    registry.override(clock=lambda: at(T0))  # a new container: the registry is cleared per test
    event = webhook_event(shopify_order()) if handler_module == "order" else tap_event("x.y")
    answer = module.handler(event, None)
    assert answer["statusCode"] == (200 if handler_module == "order" else 400)
