"""HubSpot deletions followed, on the sandbox: dm's weekly run erases what dm holds about a
contact deleted for good in the CRM, with dm-block's own grants (the sandbox enforces IAM),
and keeps the contacts that are still there."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sandbox import scenarios
from sandbox.core import Sandbox
from testsupport.graphs import shared

DEV = shared().program("dev")


def _pair_ids(items: list[dict[str, Any]]) -> set[str]:
    ids: set[str] = set()
    for item in items:
        parts = str(item["pair_key"]).split("#")
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            ids.update(parts)
    return ids


@pytest.fixture(scope="module")
def weekly() -> Iterator[tuple[Sandbox, Any]]:
    """The dev stack with dm's CRM and one weekly run done."""
    with Sandbox(DEV) as sb:
        day = scenarios.load("dm")
        assert day is not None
        day.prepare(sb)
        sb.fire("dm-block-weekly")
        sb.drain()
        yield sb, day


def test_the_weekly_run_erases_a_contact_deleted_for_good(weekly: tuple[Sandbox, Any]) -> None:
    sb, day = weekly
    crm = day.crm
    held = _pair_ids(sb.items("dm-pairs"))
    merged = {str(m.get(a)) for m in sb.items("dm-merges") for a in ("kept_id", "merged_id")}
    in_window = sorted(held & merged & set(crm.contacts))[0]  # a merge's contact: undo window open
    keys = sorted(str(i["pair_key"]).split("#") for i in sb.items("dm-pairs") if "run" not in str(i["pair_key"]))
    free = [k for k in keys if len(k) == 2 and not set(k) & merged and set(k) <= set(crm.contacts)]
    gone = free[0][0]
    archived = next(k[0] for k in free if gone not in k)  # in a pair of its own
    for contact in (gone, in_window):
        crm.delete_for_good(contact)  # the owner's GDPR delete in HubSpot
    crm.archive(archived)  # an ordinary delete: restorable, so kept
    sb.fire("dm-block-weekly")  # a week reads only changes: a deletion is not among them
    sb.drain()
    assert gone in _pair_ids(sb.items("dm-pairs"))
    # The full re-read (every systems.dm.fullReadEveryWeeks weeks) sees every contact left.
    sb.invoke("dm-block", {"action": "block", "read": "full"}, source="schedule")
    sb.drain()
    assert gone not in _pair_ids(sb.items("dm-pairs")) | _pair_ids(sb.items("dm-decisions"))
    assert gone not in {str(m.get(a)) for m in sb.items("dm-merges") for a in ("kept_id", "merged_id")}
    assert {archived, in_window} <= _pair_ids(sb.items("dm-pairs"))
    partners = {i for k in keys if gone in k for i in k} - {gone}
    assert held - {gone} - partners <= _pair_ids(sb.items("dm-pairs"))  # the others' pairs stay
    assert not [d for d in sb.denials() if (d.function or "").startswith(sb.name("dm-"))]
