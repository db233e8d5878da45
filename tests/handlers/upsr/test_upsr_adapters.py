"""Adapters and entry points: Shopify Admin API, the messenger, the catalogue upsert, the cap,
and each scheduled or queued handler run from its environment."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from handlers.common.batch import Unusable
from handlers.upsell_recommender import suggesting
from handlers.upsell_recommender.domain import Channel, Contact
from handlers.upsell_recommender.nudges import AwsMessenger, Nudge, NudgeRejected, compose
from tests.handlers.upsr.conftest import (
    SENDER,
    T0,
    World,
    at,
    shopify_order,
    webhook_event,
)

# Shopify Admin API ------------------------------------------------------------------------


# Messenger --------------------------------------------------------------------------------


def test_sms_goes_through_end_user_messaging_from_the_configured_identity(aws: None) -> None:
    from botocore.stub import Stubber

    from handlers.common.aws_clients import client

    sms = client("pinpoint-sms-voice-v2")
    identity = "arn:aws:sms-voice:eu-west-2:123456789012:pool/pool-abc"
    nudge = compose(Contact(Channel.SMS, "+447700900123", "Ann"), "Mat", "Comfy.", "https://l/?t=x", business="Example Shop")
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
    nudge = compose(Contact(Channel.EMAIL, "ann@example.com"), "Mat", "Comfy.", "https://l/?t=x", business="Example Shop")
    assert messenger.send(nudge)
    [message] = ses_backends["123456789012"]["eu-west-2"].sent_messages
    assert message.source == SENDER and message.destinations["ToAddresses"] == ["ann@example.com"]
    assert "Hi," in nudge.text and "Reply to this email" in nudge.text
    assert nudge.text == (  # the plain-text part, signed by the shop
        "Hi,\n\nThanks for your order with Example Shop! Comfy.\n\nAdd Mat to your cart in one tap:\n"
        "https://l/?t=x\n\nExample Shop\n\nNot interested in suggestions like this? Reply to this email and "
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


def test_history_is_added_idempotently_and_never_touches_the_cap(world: World) -> None:
    from handlers.upsell_recommender.customers import record_purchase, stamp_nudge

    table = world.tables["customers"]
    assert stamp_nudge(table, "c1", T0, 2)
    for _ in range(2):
        record_purchase(table, "c1", ["A", "B"], T0, expires_at=int(T0) + 86400)
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


def test_a_job_0_1_0_queued_is_picked_and_a_newer_format_refused(world: World) -> None:
    """upsr-jobs: a job carries ``version`` 1 as 0.1.0's did; a newer one is refused
    (``batch.Unusable``: logged, then the DLQ), never half-read (handlers.common.formats)."""
    world.sync()
    world.deliver(webhook_event(shopify_order()))
    [job] = world.jobs()
    assert json.loads(job["body"])["version"] == 1
    newer = {**job, "messageId": "m-newer", "body": json.dumps({**json.loads(job["body"]), "version": 2})}
    world.bedrock.add_tool_answer({"suggestions": [{"sku": "MAT-1", "line": "Comfy."}]})
    picker = _fresh_module("picker", model_client=world.bedrock)
    assert picker.handler({"Records": [newer]}, Context()) == {
        "batchItemFailures": [{"itemIdentifier": "m-newer"}]
    }
    with pytest.raises(Unusable, match="suggest job"):  # refused, not failed like a bad job
        suggesting.process_record(newer, world.picker_deps(), now=T0 + 5)
    assert world.offer() is None
    assert picker.handler({"Records": [job]}, Context()) == {"batchItemFailures": []}
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
        "reported": False,  # nothing new on a Thursday: no mail (#40)
        "unconfirmed": 0,
    }
    assert world.owner_mail == []


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
