"""upsr-sweep: an untapped offer ends after its window, the owner's roll-up goes once a day through SES."""

from __future__ import annotations

from tests.handlers.upsr.conftest import (
    OWNER,
    T0,
    World,
    order_to_chosen_offer,
    shopify_order,
    tap_event,
    token_in,
    webhook_event,
)


def test_untapped_offer_is_ignored_after_the_window_and_reported(world: World) -> None:
    offer = order_to_chosen_offer(world)
    world.send(now=offer["send_at"])
    sent = world.offer()
    assert sent is not None and sent["state"] == "sent"
    window_end = int(sent["window_ends_at"])

    assert world.sweep(now=window_end - 1)["closed"] == 0
    assert world.sweep(now=window_end)["closed"] == 1
    closed = world.offer()
    assert closed is not None and closed["state"] == "ignored"
    assert world.sweep(now=window_end + 3600)["closed"] == 0  # a re-run skips closed offers


def test_roll_up_goes_once_a_day_after_the_report_hour_when_there_is_news(world: World) -> None:
    offer = order_to_chosen_offer(world)
    world.send(now=offer["send_at"])
    day = T0 + 86400  # the next day, 09:00 London; 06:00 is before the report hour
    assert world.sweep(now=day - 3 * 3600)["reported"] is False
    assert world.sweep(now=day)["reported"] is True
    assert world.sweep(now=day + 3600)["reported"] is False
    assert world.sweep(now=day + 86400)["reported"] is False  # nothing new since: no mail
    assert len(world.owner_mail) == 1


def test_nothing_new_sends_nothing_but_mondays_all_quiet_line(world: World) -> None:
    """#40: a mail that says nothing every day; T0 is a Thursday, T0 + 4 days a Monday."""
    for day in range(4):
        assert world.sweep(now=T0 + day * 86400)["reported"] is False
    assert world.owner_mail == []
    assert world.sweep(now=T0 + 4 * 86400)["reported"] is True
    [(subject, text)] = world.owner_mail
    assert subject == "Upsell recommender: all quiet"
    assert "No order was nudged, tapped or taken since the last roll-up." in text


def test_a_sale_is_reported_once_with_running_totals_beside_it(world: World) -> None:
    """#40: the roll-up covered a rolling 7 days, so one sale appeared in up to seven mails."""
    offer = order_to_chosen_offer(world)
    world.send(now=offer["send_at"])
    sent = world.offer()
    assert sent is not None
    world.tap(tap_event(token_in(world.messenger.sent[0].text)), now=int(sent["sent_at"]) + 600)
    assert world.sweep(now=T0 + 86400)["reported"] is True
    [(subject, text)] = world.owner_mail
    assert subject.startswith("Upsell: 1 add-on taken (")
    assert "  Add-ons taken (tapped in time): 1 (running total: 1)" in text
    # A second order the next day: the first sale is in the totals, not in the new figures.
    next_day = T0 + 86400 + 60
    world.deliver(webhook_event(shopify_order(5002, customer_id=7002, created_at=next_day)), now=next_day)
    world.bedrock.add_tool_answer({"suggestions": [{"sku": "MAT-1", "line": "A mat makes the tent twice as comfy."}]})
    assert world.pick_all() == ["chosen"]
    second = world.offer(5002)
    assert second is not None
    world.send(now=next_day + 7200)
    assert world.sweep(now=T0 + 2 * 86400)["reported"] is True
    (subject, text) = world.owner_mail[-1]
    assert subject.startswith("Upsell: 0 add-ons taken (none) from 1 order nudged")
    assert "  Add-ons taken (tapped in time): 0 (running total: 1)" in text
    assert "  Orders nudged: 1 (running total: 2)" in text


def test_sweep_mails_the_owner_through_ses(world: World) -> None:
    """The real mailer: SES v2 from the sender address to the owner."""
    from moto.ses.models import ses_backends

    from handlers.upsell_recommender import contract, sweeping

    config = contract.SweepSettings.from_environ()
    sweeping.run(sweeping.SweepDeps.from_settings(config), now=T0 + 4 * 86400)  # Monday's line
    sent = ses_backends["123456789012"]["eu-west-2"].sent_messages
    assert len(sent) == 1
    assert sent[0].destinations["ToAddresses"] == [OWNER]
