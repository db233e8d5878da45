"""upsr-sweep: an untapped offer ends after its window, the owner's roll-up goes once a day through SES."""

from __future__ import annotations

from tests.handlers.upsr.conftest import (
    OWNER,
    T0,
    World,
    order_to_chosen_offer,
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


def test_roll_up_goes_once_a_day_after_the_report_hour(world: World) -> None:
    early = T0 - 3 * 3600  # 06:00 London in January
    assert world.sweep(now=early)["reported"] is False
    assert world.sweep(now=T0)["reported"] is True
    assert world.sweep(now=T0 + 3600)["reported"] is False
    assert world.sweep(now=T0 + 24 * 3600)["reported"] is True
    assert len(world.owner_mail) == 2


def test_sweep_mails_the_owner_through_ses(world: World) -> None:
    """The real mailer: SES v2 from the sender address to the owner."""
    from moto.ses.models import ses_backends

    from handlers.upsell_recommender import contract, sweeping

    config = contract.SweepSettings.from_environ()
    sweeping.run(sweeping.SweepDeps.from_settings(config), now=T0)
    sent = ses_backends["123456789012"]["eu-west-2"].sent_messages
    assert len(sent) == 1
    assert sent[0].destinations["ToAddresses"] == [OWNER]
