"""Degradations of upsr that must not be silent: a Shopify customer redacted, a refused model.

Shopify, "Work with protected customer data"
(https://shopify.dev/docs/apps/launch/protected-customer-data): an app not approved for
protected customer data (level 2: name, address, phone, email) gets that data redacted and
"might need to update [the] app to handle errors or redacted data". The orders/create payload
then carries the customer with its id and consent states, and ``null`` for ``first_name``,
``last_name``, ``email`` and ``phone`` (and the order's own ``email``, ``phone``,
``contact_email``). The fallback: no nudge for that order, nothing guessed, counted
(``CustomerRedacted``, alarmed through ``Degraded``) and named in the owner's next roll-up.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from handlers.common.degradations import BEDROCK_ACCESS_PAGE, SHOPIFY_PCD_PAGE
from tests.handlers.upsr.conftest import T0, World, shopify_order, webhook_event
from testsupport.metrics import count_metrics, emitted


def redacted_order(order_id: int = 5001) -> dict[str, Any]:
    """An orders/create payload as an app without protected customer data access gets it."""
    order = shopify_order(order_id)
    order.update({"email": None, "phone": None, "contact_email": None})
    order["customer"].update(
        {"first_name": None, "last_name": None, "email": None, "phone": None}
    )
    return order


def _counted(out: str) -> list[tuple[str, float, dict[str, Any]]]:
    return emitted(out)


@pytest.fixture
def metrics_on(monkeypatch: pytest.MonkeyPatch) -> None:
    count_metrics(monkeypatch, "upsr-order")


def test_a_redacted_customer_gets_no_nudge_and_is_counted_once(
    world: World, metrics_on: None, capsys: pytest.CaptureFixture[str]
) -> None:
    world.sync()
    capsys.readouterr()
    answer = world.deliver(webhook_event(redacted_order()))
    assert answer["statusCode"] == 200
    assert json.loads(answer["body"])["outcome"] == "customer-redacted"
    assert world.jobs() == []  # no nudge, nothing guessed
    [order] = world.items("orders")
    assert order["outcome"] == "customer-redacted"
    counted = _counted(capsys.readouterr().out)
    assert ("CustomerRedacted", 1.0, {"service": "upsr", "function": "upsr-order"}) in counted
    assert ("Degraded", 1.0, {"service": "upsr"}) in counted

    # Shopify delivers again: a duplicate changes nothing and counts nothing.
    world.deliver(webhook_event(redacted_order()), now=T0 + 5)
    again = _counted(capsys.readouterr().out)
    assert not [m for m in again if m[0] in {"CustomerRedacted", "Degraded"}]
    note = world.tables["offers"].get_item(
        Key={"offer_id": "degraded#CustomerRedacted#upsr-order"}
    )["Item"]
    assert (note["calls"], note["first_at"]) == (1, T0)
    assert note["expires_at"] > T0  # the table's TTL removes it once the cause is fixed


def test_a_customer_without_consent_is_not_mistaken_for_redacted(world: World) -> None:
    """Contact fields present but no marketing consent: the ordinary no-consent outcome."""
    world.sync()
    answer = world.deliver(webhook_event(shopify_order(sms=False, email_consent=False)))
    assert json.loads(answer["body"])["outcome"] == "no-consent"
    assert "Item" not in world.tables["offers"].get_item(
        Key={"offer_id": "degraded#CustomerRedacted#upsr-order"}
    )


def test_the_next_roll_up_names_the_redaction_and_what_to_request(world: World) -> None:
    world.sync()
    world.deliver(webhook_event(redacted_order(5001)), now=T0 - 7200)
    world.deliver(webhook_event(redacted_order(5002)), now=T0 - 3600)
    assert world.sweep(now=T0)["reported"] is True
    [(subject, text)] = world.owner_mail
    assert "running on rules" in subject
    assert "Orders arrive without the customer's name, email and phone" in text
    assert SHOPIFY_PCD_PAGE not in text  # #40: the fix goes to whoever deployed the stack
    [(_, fix)] = world.alert_mail
    assert "Shopify customer redacted in upsr-order: 2 times since 01 Jan 2026 07:00" in fix
    assert "Request protected customer data access" in fix and SHOPIFY_PCD_PAGE in fix


def test_a_refused_picker_model_is_named_in_the_roll_up(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bedrock refuses the picker's model (no model access in the account): the rules decide,
    the refusal is noted with the model id, and the roll-up says to enable model access."""
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "upsr-picker")
    world.sync()
    world.deliver(webhook_event(shopify_order()))
    world.bedrock.add_error("AccessDeniedException")
    world.pick_all()
    model = world.picker_deps().model_id
    assert world.sweep(now=T0 + 60)["reported"] is True
    [(_, text)] = world.owner_mail
    assert "No add-on offers are being picked today" in text and "Bedrock" not in text
    [(_, fix)] = world.alert_mail
    assert f"Model refused ({model}) in upsr-picker: 1 time since" in fix
    assert BEDROCK_ACCESS_PAGE in fix and "get-foundation-model-availability" in fix
