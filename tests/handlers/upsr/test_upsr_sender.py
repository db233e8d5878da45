"""upsr-sender's claim under races and crashes (issue #27, findings 1 and 2).

* An opt-out stored after the sender's first read of upsr-optout and before its claim wins: the
  claim (chosen -> sent, with the cap stamp) checks the opt-out's absence in the same write.
* A sender that dies after its claim, after the cap stamp or before the send leaves an offer
  ``sent`` with no confirmed delivery: upsr-sweep counts it once and the owner's roll-up lists it
  with what to do; the nudge is never sent again.
"""

from __future__ import annotations

from typing import Any

import pytest

from handlers.common import metrics
from tests.handlers.upsr.conftest import World, shopify_order, webhook_event
from testsupport.metrics import count_metrics

MAT = {"suggestions": [{"sku": "MAT-1", "line": "A mat for the tent."}]}


class Crash(BaseException):
    """The process dies here: nothing after this point runs (not even ``except Exception``)."""


def chosen_offer(world: World) -> dict[str, Any]:
    world.sync()
    world.deliver(webhook_event(shopify_order()))
    world.bedrock.add_tool_answer(MAT)
    assert world.pick_all() == ["chosen"]
    offer = world.offer()
    assert offer is not None
    return offer


def test_an_opt_out_stored_after_the_check_and_before_the_claim_wins(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found on a1a1316: the re-check was a read before the flip, outside the guarded write."""
    from handlers.upsell_recommender import customers

    offer = chosen_offer(world)
    real = customers.is_opted_out
    raced: list[bool] = []

    def read_then_opt_out(table: Any, customer_id: str) -> bool:
        answer = real(table, customer_id)
        world.tables["optout"].put_item(Item={"customer_id": customer_id, "opted_out_at": 1})
        raced.append(answer)
        return answer

    monkeypatch.setattr(customers, "is_opted_out", read_then_opt_out)
    assert world.send(now=offer["send_at"]) == {"suppressed:opted-out": 1}
    assert raced == [False]  # the read said "not opted out"; the write still knew better
    assert world.messenger.sent == []
    final = world.offer()
    assert final is not None and (final["state"], final["suppressed_reason"]) == (
        "suppressed",
        "opted-out",
    )
    customer = world.tables["customers"].get_item(Key={"customer_id": "7001"}).get("Item") or {}
    assert not customer.get("recent_nudges")  # no cap slot spent on a nudge that never went


def crash_at(monkeypatch: pytest.MonkeyPatch, point: str, world: World) -> None:
    from handlers.upsell_recommender import offers, sending

    if point == "after_claim":
        real = offers.claim_for_send

        def claim_then_die(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            if result.won:
                raise Crash(point)
            return result

        monkeypatch.setattr(offers, "claim_for_send", claim_then_die)
    elif point == "after_cap_stamp":
        # The link is signed right after the cap is stamped.
        def die(*args: Any, **kwargs: Any) -> str:
            raise Crash(point)

        monkeypatch.setattr(sending, "issue_short_token", die)
    else:

        def die_sending(nudge: Any) -> str:
            raise Crash(point)

        monkeypatch.setattr(world.messenger, "send", die_sending)


@pytest.mark.parametrize("point", ["after_claim", "after_cap_stamp", "before_send"])
def test_a_sender_dying_after_its_claim_is_counted_listed_and_never_resent(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], point: str
) -> None:
    """Found on a1a1316: the offer stayed ``sent`` with no nudge, and nothing noticed."""
    # The dev stack runs without business metrics (businessMetrics: false); prod counts this.
    count_metrics(monkeypatch)
    offer = chosen_offer(world)
    send_at = int(offer["send_at"])
    with monkeypatch.context() as patch:
        crash_at(patch, point, world)
        with pytest.raises(Crash):
            world.send(now=send_at)
    claimed = world.offer()
    assert claimed is not None and claimed["state"] == "sent"
    assert world.messenger.sent == []
    capsys.readouterr()

    world.sweep(now=send_at + 600)  # inside the bound; today's roll-up goes now
    world.owner_mail.clear()
    summary = world.sweep(now=send_at + 3600)
    assert summary["unconfirmed"] == 1
    counted = [
        (name, value)
        for line in capsys.readouterr().out.splitlines()
        for (_ns, name, value, _dims) in metrics.emf_metrics(line)
        if name == "UnconfirmedNudges"
    ]
    assert counted == [("UnconfirmedNudges", 1)]
    assert world.sweep(now=send_at + 7200)["unconfirmed"] == 0  # counted once

    world.sweep(now=send_at + 24 * 3600)  # the next day's roll-up lists it, with what to do
    [(_subject, text)] = world.owner_mail
    assert "never confirmed" in text and "ofr-5001" in text
    assert "will not be sent again" in text

    assert world.send(now=send_at + 24 * 3600) == {}
    assert world.messenger.sent == []


def test_a_confirmed_nudge_is_never_reported(world: World) -> None:
    offer = chosen_offer(world)
    send_at = int(offer["send_at"])
    assert world.send(now=send_at) == {"sent": 1}
    delivered = world.offer()
    assert delivered is not None and delivered["delivered_at"] == send_at
    assert world.sweep(now=send_at + 3600)["unconfirmed"] == 0


def test_a_spent_daily_sms_cap_postpones_the_nudge_to_the_next_utc_day(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #41: past ``dailySms`` the nudge is not sent and not dropped: the offer stays
    chosen, due again at the next UTC midnight, and goes out then."""
    offer = chosen_offer(world)
    monkeypatch.setenv("DAILY_SMS", "0")
    due = int(offer["send_at"])
    assert world.send(now=due) == {"postponed:sms-cap": 1}
    assert world.messenger.sent == []
    waiting = world.offer()
    midnight = (due // 86400 + 1) * 86400
    assert waiting is not None and (waiting["state"], waiting["send_at"]) == ("chosen", midnight)
    assert waiting["expires_at"] > offer["expires_at"]  # kept alive for the later window
    assert world.send(now=due + 600) == {}  # not due again the same day

    monkeypatch.setenv("DAILY_SMS", "199")
    assert world.send(now=midnight + 60) == {"sent": 1}
    assert len(world.messenger.sent) == 1
