"""upsr-compliance: Shopify's three compliance webhooks, replayed as Shopify documents them
("Privacy law compliance", https://shopify.dev/docs/apps/build/compliance/privacy-law-compliance:
each topic's example payload, POSTed as JSON, signed like every webhook; 401 on a bad HMAC)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handlers.common.function_url import Request
from handlers.upsell_recommender import compliance, contract
from tests.handlers.upsr.conftest import SHOP, World, order_to_chosen_offer, shopify_order
from tests.handlers.upsr.conftest import webhook_event as webhook

SHOP_ID = 954889
DOCUMENTED: dict[str, dict[str, Any]] = {
    "customers/data_request": {
        "shop_id": SHOP_ID,
        "shop_domain": SHOP,
        "orders_requested": [299938, 280263, 220458],
        "customer": {"id": 191167, "email": "john@example.com", "phone": "555-625-1199"},
        "data_request": {"id": 9999},
    },
    "customers/redact": {
        "shop_id": SHOP_ID,
        "shop_domain": SHOP,
        "customer": {"id": 191167, "email": "john@example.com", "phone": "555-625-1199"},
        "orders_to_redact": [299938, 280263, 220458],
    },
    "shop/redact": {"shop_id": SHOP_ID, "shop_domain": SHOP},
}
"""Shopify's example payloads, their ``{shop}.myshopify.com`` being the test shop."""


def _deliver(world: World, topic: str, payload: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    deps = compliance.ComplianceDeps.from_settings(
        contract.ComplianceSettings.from_environ(),
        send=lambda m: world.owner_mail.append((m.subject, m.text)),
    )
    return compliance.handle(Request.read(webhook(payload, topic=topic, **kwargs)), deps)


def _ann(topic: str) -> dict[str, Any]:
    """The documented payload, naming the customer and order the test stored."""
    payload: dict[str, Any] = json.loads(json.dumps(DOCUMENTED[topic]))
    payload["customer"] = {"id": 7001, "email": "ann@example.com", "phone": "+447700900123"}
    payload["orders_to_redact" if topic == "customers/redact" else "orders_requested"] = [5001]
    return payload


def _everything(world: World) -> str:
    return json.dumps({n: world.items(n) for n in ("orders", "offers", "customers", "optout")}, default=str)


@pytest.mark.parametrize("topic", sorted(DOCUMENTED))
def test_each_documented_payload_is_answered_200(world: World, topic: str) -> None:
    answer = _deliver(world, topic, DOCUMENTED[topic])
    assert answer["statusCode"] == 200, answer
    assert json.loads(answer["body"])["topic"] == topic


@pytest.mark.parametrize("topic", sorted(DOCUMENTED))
def test_a_bad_hmac_is_401_and_changes_nothing(world: World, topic: str) -> None:
    order_to_chosen_offer(world)
    before = _everything(world)
    for kwargs in ({"secret": "not-the-app-secret"}, {"omit_signature": True}):
        answer = _deliver(world, topic, _ann(topic) if topic != "shop/redact" else DOCUMENTED[topic], **kwargs)
        assert answer["statusCode"] == 401, (kwargs, answer)
    assert _everything(world) == before and world.owner_mail == []


def test_customers_redact_erases_the_customer_and_no_one_else(world: World) -> None:
    order_to_chosen_offer(world)
    other = shopify_order(5002, customer_id=8002, phone="+447700900999", email="bob@example.com")
    assert world.deliver(webhook(other))["statusCode"] == 200
    assert "7001" in _everything(world)
    answer = _deliver(world, "customers/redact", _ann("customers/redact"))
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["erased"] >= 3, answer
    left = _everything(world)
    assert "7001" not in left and "5001" not in left and "+447700900123" not in left
    assert "8002" in left and "5002" in left  # another customer's order stays
    again = _deliver(world, "customers/redact", _ann("customers/redact"))
    assert json.loads(again["body"])["erased"] == 0  # Shopify retries: nothing more to erase
    assert "ann@example.com" not in _everything(world)  # only salted hashes remember her


def test_a_redacted_customer_ordering_again_is_an_opted_out_stranger(world: World) -> None:
    order_to_chosen_offer(world)
    assert _deliver(world, "customers/redact", _ann("customers/redact"))["statusCode"] == 200
    answer = world.deliver(webhook(shopify_order(5003)))
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["outcome"] == "opted-out", answer
    assert world.jobs() == []
    # a stranger with another id and phone still gets the usual job
    other = shopify_order(5004, customer_id=8004, phone="+447700900444", email="cy@example.com")
    assert json.loads(world.deliver(webhook(other))["body"])["outcome"] == "eligible"


def test_customers_data_request_mails_the_owner_what_upsr_holds(world: World) -> None:
    order_to_chosen_offer(world)
    answer = _deliver(world, "customers/data_request", _ann("customers/data_request"))
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["records"] >= 3, answer
    [(subject, text)] = world.owner_mail
    assert "9999" in subject
    document = json.loads(text[text.index("{"):])
    assert document["upsr-orders"][0]["content"]["order_id"] == "5001"
    assert document["upsr-offers"][0]["content"]["customer_id"] == "7001"
    assert "7001" in _everything(world)  # a data request erases nothing


def test_shop_redact_empties_every_upsr_table(world: World) -> None:
    order_to_chosen_offer(world)
    assert world.items("catalogue")
    answer = _deliver(world, "shop/redact", DOCUMENTED["shop/redact"])
    assert answer["statusCode"] == 200, answer
    assert all(world.items(n) == [] for n in ("orders", "offers", "customers", "optout", "catalogue"))


def test_another_shop_or_topic_is_refused(world: World) -> None:
    assert _deliver(world, "customers/redact", _ann("customers/redact"), shop="other.myshopify.com")["statusCode"] == 403
    foreign = {**_ann("customers/redact"), "shop_domain": "other.myshopify.com"}
    assert _deliver(world, "customers/redact", foreign)["statusCode"] == 403
    assert _deliver(world, "orders/create", _ann("customers/redact"))["statusCode"] == 400
