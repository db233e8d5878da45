"""Guarded transitions: exactly one writer moves an item; the loser is told, not raised at."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from handlers.common.transitions import ABSENT, put_if_absent, transition


@pytest.fixture
def offers(make_table: Callable[..., Any]) -> Any:
    table = make_table("offers", "offer_id")
    table.put_item(Item={"offer_id": "o-1", "state": "chosen", "sku": "A1"})
    return table


def test_transition_wins_and_returns_new_item(offers: Any) -> None:
    result = transition(offers, {"offer_id": "o-1"}, "state", "chosen", "sent", {"sent_at": 100})
    assert result.won
    assert result.current == "sent"
    assert result.item is not None and result.item["sent_at"] == 100
    assert offers.get_item(Key={"offer_id": "o-1"})["Item"]["state"] == "sent"


def test_two_racers_from_the_same_state_one_wins(offers: Any) -> None:
    """Both workers read "chosen"; both try to move it. The second learns who won."""
    seen = [offers.get_item(Key={"offer_id": "o-1"})["Item"]["state"] for _ in range(2)]
    assert seen == ["chosen", "chosen"]
    first = transition(offers, {"offer_id": "o-1"}, "state", seen[0], "taken", {"by": "tap"})
    second = transition(offers, {"offer_id": "o-1"}, "state", seen[1], "ignored", {"by": "sweep"})
    assert first.won and not second.won
    assert second.current == "taken"
    assert second.item is not None and second.item["by"] == "tap"
    item = offers.get_item(Key={"offer_id": "o-1"})["Item"]
    assert (item["state"], item["by"]) == ("taken", "tap")


def test_concurrent_threads_one_wins(offers: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight threads race from the same state; exactly one moves the item.

    DynamoDB applies a conditional write atomically per item; moto does not lock, so the
    backend call is serialised here to give moto that guarantee. The threads still read the
    state first and write later, which is exactly where a read-then-write design would break.
    """
    from moto.dynamodb.models import DynamoDBBackend

    atomic = threading.Lock()
    original = DynamoDBBackend.update_item

    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with atomic:
            return original(self, *args, **kwargs)

    monkeypatch.setattr(DynamoDBBackend, "update_item", locked)
    barrier = threading.Barrier(8)
    results: dict[int, Any] = {}

    def race(worker: int) -> None:
        state = offers.get_item(Key={"offer_id": "o-1"})["Item"]["state"]
        barrier.wait()
        results[worker] = transition(
            offers, {"offer_id": "o-1"}, "state", state, "sent", {"sender": worker}
        )

    threads = [threading.Thread(target=race, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [n for n, result in results.items() if result.won]
    assert len(results) == 8
    assert len(winners) == 1
    assert offers.get_item(Key={"offer_id": "o-1"})["Item"]["sender"] == winners[0]
    assert all(r.current == "sent" for n, r in results.items() if n != winners[0])


def test_missing_item_is_a_loss_and_is_not_created(offers: Any) -> None:
    result = transition(offers, {"offer_id": "nope"}, "state", "chosen", "sent")
    assert not result.won
    assert result.current is None and result.item is None
    assert "Item" not in offers.get_item(Key={"offer_id": "nope"})


def test_expected_may_be_several_states(offers: Any) -> None:
    assert transition(offers, {"offer_id": "o-1"}, "state", ("sent", "chosen"), "sent").won
    result = transition(offers, {"offer_id": "o-1"}, "state", {"chosen", "no-fit"}, "ignored")
    assert not result.won and result.current == "sent"


def test_extra_updates_and_removals_apply_only_on_win(offers: Any) -> None:
    lost = transition(
        offers, {"offer_id": "o-1"}, "state", "sent", "taken", {"taken_at": 5}, remove=["sku"]
    )
    assert not lost.won
    assert offers.get_item(Key={"offer_id": "o-1"})["Item"] == {
        "offer_id": "o-1",
        "state": "chosen",
        "sku": "A1",
    }
    won = transition(
        offers, {"offer_id": "o-1"}, "state", "chosen", "taken", {"taken_at": 5}, remove=["sku"]
    )
    assert won.won
    assert offers.get_item(Key={"offer_id": "o-1"})["Item"] == {
        "offer_id": "o-1",
        "state": "taken",
        "taken_at": 5,
    }


def test_where_holds_the_move_to_a_token_and_an_absent_stamp(offers: Any) -> None:
    """A claim's own release: the state and the claim token must match, the stamp be absent."""
    key = {"offer_id": "o-1"}
    assert transition(offers, key, "state", "chosen", "claimed", {"claim": "c-1"}).won
    assert not transition(offers, key, "state", "claimed", "chosen", where={"claim": "c-2"}).won
    stamp = {"stamped_at": 7}
    once = {"stamped_at": ABSENT}
    assert transition(offers, key, "state", "claimed", "claimed", stamp, where=once).won
    assert not transition(offers, key, "state", "claimed", "claimed", {"stamped_at": 8}, where=once).won
    released = transition(
        offers, key, "state", "claimed", "chosen", remove=["claim"], where={"claim": "c-1"}
    )
    assert released.won
    assert offers.get_item(Key=key)["Item"] == {
        "offer_id": "o-1", "state": "chosen", "sku": "A1", "stamped_at": 7,
    }


def test_state_attribute_cannot_also_be_an_extra_update(offers: Any) -> None:
    with pytest.raises(ValueError):
        transition(offers, {"offer_id": "o-1"}, "state", "chosen", "sent", {"state": "taken"})


def test_other_errors_are_raised(offers: Any) -> None:
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError):
        transition(offers, {"wrong_key": "o-1"}, "state", "chosen", "sent")


def test_put_if_absent_first_writer_wins(make_table: Callable[..., Any]) -> None:
    orders = make_table("orders", "order_id")
    first = put_if_absent(orders, {"order_id": "1001", "basket": ["A1"]}, "order_id")
    second = put_if_absent(orders, {"order_id": "1001", "basket": ["B2"]}, "order_id")
    assert first.won and first.existing is None
    assert not second.won
    assert second.existing == {"order_id": "1001", "basket": ["A1"]}
    assert orders.get_item(Key={"order_id": "1001"})["Item"]["basket"] == ["A1"]


def test_put_if_absent_with_a_sort_key(make_table: Callable[..., Any]) -> None:
    touches = make_table("touches", "visitor", sort_key="at")
    assert put_if_absent(touches, {"visitor": "v", "at": "1"}, "visitor").won
    assert put_if_absent(touches, {"visitor": "v", "at": "2"}, "visitor").won
    assert not put_if_absent(touches, {"visitor": "v", "at": "1"}, "visitor").won


def test_put_if_absent_needs_the_key(make_table: Callable[..., Any]) -> None:
    with pytest.raises(ValueError):
        put_if_absent(make_table("t", "pk"), {"other": 1}, "pk")


# Transactions -----------------------------------------------------------------------------


def test_a_transaction_applies_every_write_or_none(make_table: Callable[..., Any]) -> None:
    from handlers.common.transitions import transact, tx_delete, tx_put, tx_update

    claims = make_table("claims", "pk")
    claims.put_item(Item={"pk": "taken", "holder": "a"})
    won = transact(claims, [
        tx_put("claims", {"pk": "p1", "state": "merging"}, "attribute_not_exists(pk)"),
        tx_update("claims", {"pk": "taken"}, "SET holder = :b", "holder = :a", {":a": "a", ":b": "b"}),
    ])
    assert won.won and won.reasons == ()
    lost = transact(claims, [
        tx_put("claims", {"pk": "p2", "state": "merging"}, "attribute_not_exists(pk)"),
        tx_delete("claims", {"pk": "taken"}, "holder = :a", {":a": "a"}),  # holder is b now
    ])
    assert not lost.won and lost.reasons == ("None", "ConditionalCheckFailed")
    assert lost.failed(1) and not lost.failed(0) and not lost.conflict
    assert claims.get_item(Key={"pk": "p2"}).get("Item") is None  # the first write was undone
    assert claims.get_item(Key={"pk": "taken"})["Item"]["holder"] == "b"


def test_a_transaction_conflict_is_a_loss_not_an_error() -> None:
    """DynamoDB cancels one of two transactions on one item with ``TransactionConflict``
    (moto never does: it has no concurrency); the caller gets a loss it can report as busy."""
    from botocore.exceptions import ClientError

    from handlers.common.transitions import transact, tx_put
    from handlers.duplicate_merger.store import DynamoLedger

    class Client:
        def transact_write_items(self, **_: Any) -> None:
            raise ClientError(
                {"Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
                 "CancellationReasons": [{"Code": "TransactionConflict"}, {"Code": "None"}]},
                "TransactWriteItems",
            )

    class Table:
        class meta:  # the shape of boto3's Table.meta
            client = Client()

    result = transact(Table(), [tx_put("t", {"pk": "1"}), tx_put("t", {"pk": "2"})])  # type: ignore[arg-type]
    assert not result.won and result.conflict and result.failed(0)
    assert DynamoLedger._lost(result, link_index=1) == "busy"  # not "decided", not "link_used"
    with pytest.raises(ValueError):
        transact(Table(), [])  # type: ignore[arg-type]
