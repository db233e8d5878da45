"""dm-block's checkpointed read: a portal too large for one invocation is read over several,
saved in the pairs table, blocked once, and a duplicate continuation does nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handlers.duplicate_merger.crm import CrmError
from handlers.duplicate_merger.functions import block
from handlers.duplicate_merger.reading import (
    BLOCK_RESERVE_S,
    SAVE_RESERVE_S,
    DynamoCheckpoints,
    block_reserve,
    decode_chunk,
    read_step,
    split_chunks,
)
from tests.handlers.dm.conftest import DmAws
from testsupport.common import LambdaStub
from testsupport.crm_generator import generate
from testsupport.dm import InMemoryCrm, MemoryCheckpoints


def portal(size: int, page_size: int = 100) -> InMemoryCrm:
    crm = InMemoryCrm(page_size=page_size)
    for number, (_, props) in enumerate(generate(size, seed=5, duplicate_rate=0.1).contacts):
        crm.add_contact(f"{100_000 + number}", **props)
    return crm


class Budget:
    """An invocation's remaining time: each page read costs ``per_page`` seconds."""

    def __init__(self, seconds: float, per_page: float, crm: InMemoryCrm) -> None:
        self.left = seconds
        original = crm.page

        def page(after: str | None) -> Any:
            self.left -= per_page
            return original(after)

        crm.page = page  # type: ignore[method-assign]

    def __call__(self) -> float:
        return self.left


def test_a_small_portal_is_read_and_blocked_in_one_invocation() -> None:
    crm = portal(450)
    store = MemoryCheckpoints()
    outcome = read_step(crm, store, "2026-W49", 0, Budget(300, 0.25, crm))
    assert outcome.action == "block" and len(list(outcome.contacts)) == 450 and outcome.pages == 5
    assert store.states == {}  # nothing saved when it fits


def test_a_large_portal_continues_across_invocations_and_blocks_everything_once() -> None:
    crm = portal(3000)
    store = MemoryCheckpoints()
    steps, step, outcome = 0, 0, None
    while True:
        steps += 1
        outcome = read_step(crm, store, "2026-W49", step, Budget(300, 25.0, crm))
        if outcome.action != "continue":
            break
        step = outcome.state.step
    assert outcome.action == "block"
    assert not isinstance(outcome.contacts, list)  # decoded as blocking consumes them
    assert sorted(cid for cid, _ in outcome.contacts) == sorted(crm.contacts)  # each contact once
    assert steps == 3 and outcome.state.done  # 12 pages a run at 25 s: 30 pages in 3, blocked in the 3rd
    # A duplicate of the last continuation finds the state moved on and does nothing.
    assert read_step(crm, store, "2026-W49", step, Budget(300, 25.0, crm)).action == "stale"


def test_reading_ends_with_too_little_time_to_block_hands_blocking_on() -> None:
    crm = portal(500)
    store = MemoryCheckpoints()
    per_page = (300 - block_reserve(500) + 5) / 5  # the last page leaves less than the reserve
    first = read_step(crm, store, "r", 0, Budget(300, per_page, crm))
    assert first.action == "continue" and first.state.done
    final = read_step(crm, store, "r", first.state.step, Budget(300, 0.25, crm))
    assert final.action == "block" and len(list(final.contacts)) == 500


def test_an_error_after_progress_keeps_the_progress() -> None:
    crm = portal(300)
    original = crm.page
    calls = {"n": 0}

    def flaky(after: str | None) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise CrmError("HTTP 502", status=502, retryable=True)
        return original(after)

    crm.page = flaky  # type: ignore[method-assign]
    store = MemoryCheckpoints()
    first = read_step(crm, store, "r", 0, lambda: 300.0)
    assert first.action == "continue" and first.state.contacts == 100 and first.state.after == "100"
    final = read_step(crm, store, "r", first.state.step, lambda: 300.0)
    assert final.action == "block" and len({cid for cid, _ in final.contacts}) == 300
    with pytest.raises(CrmError):  # no progress at all: the invocation fails (and is retried)
        crm.page = lambda after: (_ for _ in ()).throw(CrmError("down", status=503))  # type: ignore[method-assign]
        read_step(crm, MemoryCheckpoints(), "s", 0, lambda: 300.0)


def test_chunks_stay_under_the_item_limit() -> None:
    contacts = [(str(i), {"email": f"person{i}@example{i % 97}.com", "firstname": f"N{i}"}) for i in range(20_000)]
    chunks = split_chunks(contacts, limit=60_000)
    assert len(chunks) > 1 and max(len(c) for c in chunks) <= 60_000
    assert [c for chunk in chunks for c in decode_chunk(chunk)] == contacts
    assert SAVE_RESERVE_S < BLOCK_RESERVE_S


class Context:
    function_name = "dev-dm-block"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds * 1000)


def six_pages_an_invocation(crm: InMemoryCrm, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each invocation has time for 6 pages (600 contacts) before its save reserve: a page
    takes 0.01 s of a clock the test keeps."""
    from handlers.duplicate_merger import reading

    monkeypatch.setattr(reading, "SAVE_RESERVE_S", 300 - 5 * 0.01 - 0.001)
    clock = {"t": 0.0}
    original = crm.page

    def timed(after: str | None) -> Any:
        clock["t"] += 0.01
        return original(after)

    crm.page = timed  # type: ignore[method-assign]
    monkeypatch.setattr("time.monotonic", lambda: clock["t"])


def test_the_handler_chains_itself_through_the_pairs_table(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handlers.common.aws_clients import client
    from handlers.common.entry import registry
    from handlers.duplicate_merger import reading

    crm = portal(1200)
    # The dev stack's dm-block environment (dm_aws) names the secret and the CRM's URL.
    client("secretsmanager").put_secret_value(SecretId="dev-dm-crm-read", SecretString='{"token": "svc"}')
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "dev-dm-block")
    stub = LambdaStub()
    registry.override(block, crm=lambda deadline: crm, lambda_client=lambda: stub)
    six_pages_an_invocation(crm, monkeypatch)
    monkeypatch.setattr(reading, "block_reserve", lambda contacts: 0.0)
    answer = block.handler({"action": "block"}, Context(300))
    assert answer["continued"] is True
    while stub.invocations:
        payload = json.loads(stub.invocations.pop(0)["Payload"])
        assert stub.invocations == [] and payload["action"] == "block"
        answer = block.handler(payload, Context(300))
    assert answer["contacts"] == 1200 and answer["read_invocations"] == 2
    state = DynamoCheckpoints(dm_aws.pairs, ttl=0).load(answer["run_id"])
    assert state is not None and state.done and state.chunks == 2
    assert block.handler(payload, Context(300))["continued"] is False  # a duplicate: nothing
