"""upsr-order: an order that can never become a job is refused before the marker, a trade-size
order gets its job, and a crash between any two of the order path's writes still ends in one
offer (the takeover re-sends a job whose enqueue was never confirmed; the picker's one-offer
conditional put absorbs a second job)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from handlers.common.function_url import Request
from handlers.common.transitions import put_if_absent, transition
from handlers.upsell_recommender import orders
from handlers.upsell_recommender.customers import record_purchase
from handlers.upsell_recommender.jobs import SuggestJob
from tests.handlers.upsr.conftest import T0, World, shopify_order
from tests.handlers.upsr.conftest import webhook_event as webhook

MAT = {"suggestions": [{"sku": "MAT-1", "line": "A mat for the tent."}]}
REPO = Path(__file__).resolve().parents[3]
# Run in a fresh interpreter: which of the handlers' pydantic models the import built, and
# whether it loaded the SDK (boto3 makes the DynamoDB resource).
_IMPORT_PROBE = """
import json, sys
import handlers.upsell_recommender.functions.order
from pydantic import BaseModel

def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)

built = sorted(
    c.__qualname__ for c in subclasses(BaseModel)
    if c.__module__.startswith("handlers.") and c.__pydantic_complete__
)
print(json.dumps({"built": built, "sdk": [m for m in ("boto3", "botocore.session") if m in sys.modules]}))
"""


def test_the_import_builds_no_model_and_makes_no_aws_resource() -> None:
    """Lambda's INIT (waited for by Shopify, billed since August 2025) is the import: the
    order and job models are built on their first use, and no boto3 resource or client exists
    before the first request needs one (make bench-init measures what this saves)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}  # no AWS variables at all
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE], capture_output=True, text=True, env=env,
        cwd=REPO, check=True,
    )
    assert json.loads(done.stdout) == {"built": [], "sdk": []}


def nothing_written(world: World) -> None:
    assert world.items("orders") == [] and world.items("customers") == [] and world.jobs() == []


def test_a_trade_size_quantity_gets_its_job(world: World) -> None:
    payload = shopify_order()
    payload["line_items"][0]["quantity"] = 10_001
    answer = world.deliver(webhook(payload))
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["outcome"] == "eligible"
    [job] = world.jobs()
    assert SuggestJob.model_validate_json(job["body"]).basket[0].quantity == 10_001


def test_the_order_marker_and_the_customer_history_expire(world: World) -> None:
    """Issue 42: upsr-orders and upsr-customers kept everything without an end. The marker
    expires orderDays after the order arrived; the history customerDays after the customer's
    last order, moved by each order."""
    import os

    order_s = int(os.environ["ORDER_DAYS"]) * 86400
    customer_s = int(os.environ["CUSTOMER_DAYS"]) * 86400
    assert world.deliver(webhook(shopify_order()), now=T0)["statusCode"] == 200
    [marker] = world.items("orders")
    assert int(marker["expires_at"]) == int(T0) + order_s
    [customer] = world.items("customers")
    assert int(customer["expires_at"]) == int(T0) + customer_s
    later = shopify_order(order_id=5002, created_at=T0 + 3540)
    assert world.deliver(webhook(later), now=T0 + 3600)["statusCode"] == 200
    [customer] = world.items("customers")
    assert int(customer["expires_at"]) == int(T0) + 3600 + customer_s


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("price", "1e200"),
        ("price", "1" * 40),
        ("subtotal_price", "1e200"),
        ("subtotal_price", "9" * 40 + ".5"),
        ("quantity", 10**7),
        ("quantity", 10**40),
    ],
)
def test_numbers_no_shop_or_dynamodb_can_use_are_a_4xx_with_nothing_written(
    world: World, field: str, value: Any
) -> None:
    payload = shopify_order()
    if field == "subtotal_price":
        payload[field] = value
    else:
        payload["line_items"][0][field] = value
    answer = world.deliver(webhook(payload))
    assert 400 <= answer["statusCode"] < 500, answer
    assert json.loads(answer["body"])["error"]["code"] in ("invalid_order", "order_out_of_range")
    nothing_written(world)
    assert world.deliver(webhook(payload))["statusCode"] == answer["statusCode"]  # every retry alike
    nothing_written(world)


class Crash(BaseException):
    """The invocation dies here."""


def test_a_crash_between_any_two_order_writes_ends_in_one_offer(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes of the order path: the marker, the job message, pending -> enqueued, the history.

    Each write is replaced where ``orders`` names it (its own module attributes), so the crash
    is the order path's and no other caller's."""
    from handlers.upsell_recommender import suggesting

    world.sync()
    writes = ("put_if_absent", "send_job", "transition", "record_purchase")
    for at, name in enumerate(writes):
        order_id = 6000 + at
        event = webhook(shopify_order(order_id))
        armed = {"name": name}

        def crashing(real: Any, label: str, armed: dict[str, str] = armed) -> Any:
            def call(*args: Any, **kwargs: Any) -> Any:
                if armed["name"] == label:
                    armed["name"] = ""
                    raise Crash(label)
                return real(*args, **kwargs)
            return call

        with monkeypatch.context() as patch:
            patch.setattr(orders, "put_if_absent", crashing(put_if_absent, "put_if_absent"))
            patch.setattr(orders, "transition", crashing(transition, "transition"))
            patch.setattr(orders, "record_purchase", crashing(record_purchase, "record_purchase"))
            deps = world.order_deps()
            deps = replace(deps, send_job=crashing(deps.send_job, "send_job"))
            with pytest.raises(Crash):
                orders.handle(Request.read(event), deps, now=T0)
            # Shopify retries after the function's timeout: the redelivery finishes the order.
            retry = orders.handle(Request.read(event), world.order_deps(), now=T0 + 60)
        assert retry["statusCode"] == 200, (name, retry)
        jobs = world.jobs()
        assert 1 <= len(jobs) <= 2, (name, len(jobs))  # two only when the crash hid a sent job
        item = world.tables["orders"].get_item(Key={"order_id": str(order_id)})["Item"]
        assert item["job_state"] == "enqueued", name
        deps_p = world.picker_deps()
        for _ in jobs:
            world.bedrock.add_tool_answer(MAT)
        outcomes = [suggesting.process_record(job, deps_p, now=T0 + 65).value for job in jobs]
        assert outcomes.count("chosen") == 1, (name, outcomes)
        assert len([o for o in world.items("offers") if o["order_id"] == str(order_id)]) == 1
        history = world.tables["customers"].get_item(Key={"customer_id": "7001"})["Item"]
        assert "TENT-2P" in history["owned_skus"], name  # the history was not lost either


def test_three_deliveries_of_one_order_at_once_make_one_job(world: World, atomic_dynamodb: Any) -> None:
    """50 trials: Shopify's duplicate deliveries arrive together, each on its own thread."""
    import threading

    atomic_dynamodb.max_s = 0.002
    deps = world.order_deps()
    for trial in range(50):
        event = webhook(shopify_order(7000 + trial, customer_id=8000 + trial))
        barrier = threading.Barrier(3)
        statuses: list[str] = []

        def deliver(event: Any = event, barrier: threading.Barrier = barrier,
                    statuses: list[str] = statuses) -> None:
            barrier.wait()
            statuses.append(json.loads(orders.handle(Request.read(event), deps, now=T0)["body"])["status"])

        threads = [threading.Thread(target=deliver) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(statuses) == ["accepted", "duplicate", "duplicate"], (trial, statuses)
    jobs = world.jobs()
    assert len(jobs) == 50 and len({json.loads(j["body"])["order_id"] for j in jobs}) == 50


def test_an_unset_forget_salt_checks_no_hash_and_fails_nothing(world: World) -> None:
    """After an upgrade, before make secrets: the salt secret exists without a value, so no
    erasure can have left a hash yet (make forget writes them only with it); orders go on."""
    from handlers.common.aws_clients import client
    from handlers.common.forgotten import stack_salt

    client("secretsmanager").create_secret(Name="dev-upsr-salt-without-value")
    assert stack_salt("dev-upsr-salt-without-value") is None
    deps = replace(world.order_deps(), forget_salt=lambda: stack_salt("dev-upsr-salt-without-value"))
    answer = orders.handle(Request.read(webhook(shopify_order())), deps, now=T0)
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["outcome"] == "eligible"
