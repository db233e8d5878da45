"""The three exactly-once points, with duplicate, reordered and concurrent deliveries.

One offer per order (the webhook fired three times, a job delivered twice), one nudge per offer
(two overlapping sender runs), one terminal state per offer (a tap racing the sweep).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from handlers.common.function_url import Request
from handlers.upsell_recommender import orders, sending, sweeping, taps
from handlers.upsell_recommender.offers import due_offers
from tests.handlers.upsr.conftest import (
    MAT,
    T0,
    WINDOW_S,
    World,
    chosen_offer,
    sent_offer,
    shopify_order,
    tap_event,
    token_in,
)
from tests.handlers.upsr.conftest import webhook_event as webhook


def race(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls in threads released together; results in call order."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def run(index: int, call: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[index] = call()
        except BaseException as err:  # surfaced below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


# One offer per order ----------------------------------------------------------------------


def test_same_webhook_three_times_gives_one_job_and_one_offer(world: World) -> None:
    world.sync()
    event = webhook(shopify_order())
    answers = [json.loads(world.deliver(event, now=T0 + i)["body"]) for i in range(3)]
    assert answers == [
        {"status": "accepted", "outcome": "eligible"},
        {"status": "duplicate"},
        {"status": "duplicate"},
    ]
    jobs = world.jobs()
    assert len(jobs) == 1
    assert len(world.items("orders")) == 1

    world.bedrock.add_tool_answer(MAT)
    from handlers.upsell_recommender import suggesting

    assert suggesting.process_record(jobs[0], world.picker_deps(), now=T0 + 5).value == "chosen"
    assert len(world.items("offers")) == 1


def test_webhook_duplicates_after_the_offer_was_sent_change_nothing(world: World) -> None:
    """Reordered: Shopify's retry arrives after the offer already went out."""
    offer = sent_offer(world)
    before = world.items("orders")
    answer = world.deliver(webhook(shopify_order()), now=offer["send_at"] + 10)
    assert json.loads(answer["body"]) == {"status": "duplicate"}
    assert world.jobs() == []
    assert world.items("orders") == before
    assert world.offer() == offer


def test_concurrent_deliveries_make_one_job(world: World, atomic_dynamodb: Any) -> None:
    world.sync()
    event = webhook(shopify_order())
    deps = world.order_deps()
    answers = race(*[lambda: orders.handle(Request.read(event), deps, now=T0)] * 3)
    statuses = sorted(json.loads(a["body"])["status"] for a in answers)
    assert statuses == ["accepted", "duplicate", "duplicate"]
    assert len(world.jobs()) == 1


def test_a_job_the_first_attempt_never_sent_is_sent_once_by_a_later_retry(
    world: World, atomic_dynamodb: Any
) -> None:
    """The marker was written, then the enqueue failed: a retry after the timeout takes over."""
    world.sync()
    event = webhook(shopify_order())
    broken = world.order_deps()

    def fail(_: str) -> None:
        raise ConnectionError("SQS unreachable")

    from dataclasses import replace

    with pytest.raises(ConnectionError):
        orders.handle(Request.read(event), replace(broken, send_job=fail), now=T0)
    item = world.tables["orders"].get_item(Key={"order_id": "5001"})["Item"]
    assert item["job_state"] == "pending"

    deps = world.order_deps()
    # A retry while the first attempt could still be running does nothing.
    assert json.loads(orders.handle(Request.read(event), deps, now=T0 + 5)["body"])["status"] == "duplicate"
    assert world.jobs() == []
    # Two retries after the function timeout race: one takes over, one job.
    answers = race(*[lambda: orders.handle(Request.read(event), deps, now=T0 + 60)] * 2)
    assert sorted(json.loads(a["body"])["status"] for a in answers) == ["duplicate", "requeued"]
    assert len(world.jobs()) == 1
    item = world.tables["orders"].get_item(Key={"order_id": "5001"})["Item"]
    assert item["job_state"] == "enqueued"


def test_a_job_delivered_twice_writes_one_offer_and_calls_the_model_per_delivery(
    world: World,
) -> None:
    """SQS delivers at least once: the second delivery loses the conditional put."""
    from handlers.upsell_recommender import suggesting

    world.sync()
    world.deliver(webhook(shopify_order()))
    [job] = world.jobs()
    world.bedrock.add_tool_answer(MAT).add_tool_answer(
        {"suggestions": [{"sku": "MAT-1", "line": "Different words the second time."}]}
    )
    deps = world.picker_deps()
    assert suggesting.process_record(job, deps, now=T0 + 5).value == "chosen"
    assert suggesting.process_record(job, deps, now=T0 + 9).value == "duplicate"
    offer = world.offer()
    assert offer is not None and offer["line"] == "A mat for the tent."
    assert len(world.items("offers")) == 1


def test_a_late_duplicate_job_cannot_reset_a_sent_offer(world: World) -> None:
    """Reordered: the duplicate job arrives after the nudge; the offer stays sent."""
    from handlers.upsell_recommender import suggesting

    world.sync()
    world.deliver(webhook(shopify_order()))
    [job] = world.jobs()
    deps = world.picker_deps()
    world.bedrock.add_tool_answer(MAT).add_tool_answer(MAT)
    suggesting.process_record(job, deps, now=T0 + 5)
    chosen = world.offer()
    assert chosen is not None
    world.send(now=chosen["send_at"])
    assert suggesting.process_record(job, deps, now=chosen["send_at"] + 60).value == "duplicate"
    offer = world.offer()
    assert offer is not None and offer["state"] == "sent"
    assert len(world.messenger.sent) == 1


# One nudge per offer ----------------------------------------------------------------------


def test_two_sender_runs_over_the_same_due_offer_send_one_nudge(world: World) -> None:
    offer = sent_offer(world)
    assert world.send(now=offer["send_at"] + 300) == {}
    assert len(world.messenger.sent) == 1


def test_two_runs_that_both_listed_the_offer_send_once(world: World) -> None:
    """Both runs query before either claims (the index still says chosen for both)."""
    chosen = chosen_offer(world)
    deps = world.sender_deps()
    keyring = deps.keyring()
    now = chosen["send_at"]
    first = list(due_offers(deps.offers, deps.index, now, 10))
    second = list(due_offers(deps.offers, deps.index, now, 10))
    assert first == second and len(first) == 1
    outcomes = [
        sending.send_one(first[0], deps, keyring, now=now),
        sending.send_one(second[0], deps, keyring, now=now + 1),
    ]
    assert outcomes == ["sent", "lost-race"]
    assert len(world.messenger.sent) == 1
    customer = world.tables["customers"].get_item(Key={"customer_id": "7001"})["Item"]
    assert customer["nudge_count"] == 1  # the loser did not stamp the cap either


def test_overlapping_sender_runs_in_threads_send_once(world: World, atomic_dynamodb: Any) -> None:
    chosen = chosen_offer(world)
    deps = world.sender_deps()
    results = race(*[lambda: sending.run(deps, now=chosen["send_at"])] * 4)
    assert sum(r.get("sent", 0) for r in results) == 1
    assert len(world.messenger.sent) == 1


def test_two_offers_racing_for_the_last_cap_slot_send_one(world: World, atomic_dynamodb: Any) -> None:
    """Two orders by one customer, cap 2, one slot left: exactly one more nudge."""
    from handlers.upsell_recommender.customers import stamp_nudge

    world.sync()
    assert stamp_nudge(world.tables["customers"], "7001", T0 - 86400, 2)
    for order_id in (5001, 5002):
        world.deliver(webhook(shopify_order(order_id)))
    world.bedrock.add_tool_answer(MAT).add_tool_answer(MAT)
    assert world.pick_all() == ["chosen", "chosen"]
    deps = world.sender_deps()
    keyring = deps.keyring()
    due = list(due_offers(deps.offers, deps.index, T0 + 10**4, 10))
    outcomes = race(*[lambda o=o: sending.send_one(o, deps, keyring, now=T0 + 10**4) for o in due])
    assert sorted(outcomes) == ["sent", "suppressed:capped"]
    assert len(world.messenger.sent) == 1


def test_a_rejected_message_suppresses_the_offer_and_an_unknown_outcome_is_not_retried(
    world: World,
) -> None:
    world.sync()
    world.deliver(webhook(shopify_order(5001)))
    world.deliver(webhook(shopify_order(5002, customer_id=7002, phone="+447700900999")))
    world.bedrock.add_tool_answer(MAT).add_tool_answer(MAT)
    world.pick_all()
    world.messenger.reject.add("+447700900123")
    world.messenger.explode.add("+447700900999")
    outcomes = world.send(now=T0 + 10**4)
    assert outcomes == {"suppressed:rejected:sms:ConflictException": 1, "unknown": 1}
    assert world.offer(5001)["state"] == "suppressed"  # type: ignore[index]
    assert world.offer(5002)["state"] == "sent"  # type: ignore[index]
    assert world.send(now=T0 + 10**4 + 300) == {}
    assert world.messenger.sent == []


# One terminal state per offer -------------------------------------------------------------


def test_tap_then_sweep_after_the_window_ends_out_of_window(world: World) -> None:
    offer = sent_offer(world)
    late = int(offer["window_ends_at"]) + 60
    token = token_in(world.messenger.sent[0].text)
    assert world.tap(tap_event(token), now=late)["statusCode"] == 302
    assert world.sweep(now=late + 1)["closed"] == 0
    final = world.offer()
    assert final is not None and final["state"] == "out-of-window"


def test_sweep_then_tap_ends_ignored_and_the_tap_still_redirects(world: World) -> None:
    offer = sent_offer(world)
    late = int(offer["window_ends_at"]) + 60
    assert world.sweep(now=late)["closed"] == 1
    token = token_in(world.messenger.sent[0].text)
    answer = world.tap(tap_event(token), now=late + 1)
    assert answer["statusCode"] == 302
    final = world.offer()
    assert final is not None and final["state"] == "ignored" and "tapped_at" not in final


@pytest.mark.parametrize("attempt", range(3))
def test_tap_racing_the_sweep_ends_in_one_terminal_state(
    world: World, atomic_dynamodb: Any, attempt: int
) -> None:
    offer = sent_offer(world)
    late = int(offer["window_ends_at"]) + 60
    token = token_in(world.messenger.sent[0].text)
    tap_deps, sweep_deps = world.addlink_deps(), world.sweep_deps()
    tapped, swept = race(
        lambda: taps.handle(Request.read(tap_event(token)), tap_deps, now=late),
        lambda: sweeping.run(sweep_deps, now=late),
    )
    assert tapped["statusCode"] == 302
    final = world.offer()
    assert final is not None
    assert final["state"] in {"out-of-window", "ignored"}
    assert (final["state"] == "ignored") == (swept["closed"] == 1)
    assert ("tapped_at" in final) == (final["state"] == "out-of-window")


def test_a_tap_inside_the_window_wins_over_any_later_sweep(world: World) -> None:
    offer = sent_offer(world)
    sent_at = int(offer["sent_at"])
    token = token_in(world.messenger.sent[0].text)
    world.tap(tap_event(token), now=sent_at + 60)
    world.tap(tap_event(token), now=sent_at + 120)  # a second tap changes nothing
    assert world.sweep(now=sent_at + WINDOW_S + 3600)["closed"] == 0
    final = world.offer()
    assert final is not None and final["state"] == "taken"
    assert final["tapped_at"] == sent_at + 60
