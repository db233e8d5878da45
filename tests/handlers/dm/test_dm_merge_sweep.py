"""Claims nobody comes back for are picked up by the sweep (issue #27, finding 8 of the round).

dm-merge claims a pair for 180 s (``LOCK_LEASE_SECONDS``). An invocation that dies holding the
claim leaves the pair ``merging``; until now only a click or a redelivery *after* the lease
resumed it, so an automatic merge whose five deliveries all came inside the lease went to the
DLQ with the pair stuck and invisible (the digest skips decided pairs). The ``dm-sweep``
schedule finds every claim whose lease ran out on the sparse ``by-claim`` index and resumes it
as the next click would: a merge rolls forward (its steps are recorded) or is put back, an undo
goes on. Each one is counted (``ClaimsResumed``) and listed in the next digest in words.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from handlers.common import metrics
from handlers.common.entry import registry
from handlers.duplicate_merger.functions import merge
from handlers.duplicate_merger.merging import LOCK_LEASE_SECONDS
from tests.handlers.dm.conftest import DmAws
from tests.handlers.dm.flows import (
    NOW,
    at,
    crm_with_duplicates,
    last_mail,
    queued_merges,
    run_week,
)
from testsupport.dm import InMemoryCrm
from testsupport.metrics import count_metrics


class Died(BaseException):
    """The invocation is killed here (a timeout): no handler code runs on."""


def dies_at_archive(crm: InMemoryCrm) -> None:
    """The first archive call kills the invocation, after the links were moved."""
    real = crm.archive

    def archive(contact_id: str) -> None:
        crm.archive = real  # type: ignore[method-assign]
        raise Died(f"killed while archiving {contact_id}")

    crm.archive = archive  # type: ignore[method-assign]


def sqs_event(message: dict[str, Any], receive: int) -> dict[str, Any]:
    return {"Records": [{"messageId": "m1", "body": json.dumps(message), "eventSource": "aws:sqs",
                         "attributes": {"ApproximateReceiveCount": str(receive)}}]}


def test_a_merge_whose_redeliveries_all_fall_inside_the_lease_is_finished_by_the_sweep(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fails on ae6d6c4: there is no sweep ({"ignored": True}) and the pair stays ``merging``."""
    count_metrics(monkeypatch)
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    (message,) = queued_merges(dm_aws)
    registry.override(merge, crm=lambda: crm)
    dies_at_archive(crm)
    at(NOW)
    with pytest.raises(Died):
        merge.handler(sqs_event(message, 1), None)
    # SQS redelivers: four more receives, every one inside the 180 s lease, then the DLQ.
    for receive in range(2, 6):
        at(NOW + dt.timedelta(seconds=30 * receive))
        assert merge.handler(sqs_event(message, receive), None) == {
            "batchItemFailures": [{"itemIdentifier": "m1"}]
        }
    assert (NOW + dt.timedelta(seconds=150)).timestamp() < NOW.timestamp() + LOCK_LEASE_SECONDS
    held = dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]
    assert held["decision"] == "merging" and "102" not in crm.archived

    at(NOW + dt.timedelta(minutes=15))  # the next dm-sweep after the lease ran out
    capsys.readouterr()
    result = merge.handler({"action": "sweep"}, None)
    assert result == {"resumed": 1, "merged": 1}
    counted = [value for line in capsys.readouterr().out.splitlines()
               for (_ns, name, value, _dims) in metrics.emf_metrics(line) if name == "ClaimsResumed"]
    assert counted == [1]
    decision = dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]
    assert decision["decision"] == "merged" and decision["decided_by"] == "automatic"
    assert "102" in crm.archived
    assert not [i for i in dm_aws.merges.scan()["Items"] if str(i["merge_id"]).startswith("lock#")]
    assert merge.handler({"action": "sweep"}, None) == {"resumed": 0}  # nothing left, no CRM read


def test_a_claim_with_nothing_written_is_released_back_to_the_reviewer(dm_aws: DmAws) -> None:
    """A confirm that died after its claim, before the merge record: the sweep releases the
    pair and the link, and the pair is proposed again."""
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    lease_until = int(NOW.timestamp()) + LOCK_LEASE_SECONDS
    dm_aws.decisions.put_item(Item={
        "pair_key": "101#102", "decision": "merging", "holder": "mrg_2026_08_03_abcdef",
        "lease_until": lease_until, "merge_id": "mrg_2026_08_03_abcdef", "records": ["101", "102"],
        "by": "owner@example.com", "started_at": int(NOW.timestamp()), "link": "tok1",
    })
    dm_aws.merges.put_item(Item={"merge_id": "link#tok1", "expires_at": lease_until + 86_400,
                                 "used_at": int(NOW.timestamp()), "holder": "mrg_2026_08_03_abcdef"})
    at(NOW + dt.timedelta(seconds=LOCK_LEASE_SECONDS - 1))
    assert merge.handler({"action": "sweep"}, None) == {"resumed": 0}  # the lease still runs
    at(NOW + dt.timedelta(minutes=15))
    assert merge.handler({"action": "sweep"}, None) == {"resumed": 1, "rolled_back": 1}
    assert dm_aws.decisions.get_item(Key={"pair_key": "101#102"}).get("Item") is None
    assert dm_aws.merges.get_item(Key={"merge_id": "link#tok1"}).get("Item") is None
    assert "102" not in crm.archived


def test_the_digest_lists_what_the_sweep_did_and_what_to_do(dm_aws: DmAws) -> None:
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    (message,) = queued_merges(dm_aws)
    registry.override(merge, crm=lambda: crm)
    dies_at_archive(crm)
    at(NOW)
    with pytest.raises(Died):
        merge.handler(sqs_event(message, 1), None)
    at(NOW + dt.timedelta(minutes=15))
    merge.handler({"action": "sweep"}, None)
    at(NOW + dt.timedelta(days=1))
    assert merge.handler({"action": "digest"}, None)["sent"] is True
    text = last_mail()
    assert "1 to look at" in text
    assert "stopped part way; the automatic check finished it" in text
    assert "Undo the merge of" in text
    at(NOW + dt.timedelta(days=8))  # the next week's digest does not repeat it
    merge.handler({"action": "digest"}, None)
    assert "to look at" not in last_mail()
    # Issue 42: the week's notes expire by TTL five weeks after the week began; decisions never.
    notes = [i for i in dm_aws.decisions.scan()["Items"] if str(i["pair_key"]).startswith("notes#")]
    assert notes, "the sweep noted what it did"
    for item in notes:
        year, week = str(item["pair_key"]).removeprefix("notes#").split("-W")
        began = dt.datetime.combine(dt.date.fromisocalendar(int(year), int(week), 1), dt.time(), dt.UTC)
        assert int(item["expires_at"]) == int((began + dt.timedelta(days=35)).timestamp())
    decided = [i for i in dm_aws.decisions.scan()["Items"] if "decision" in i]
    assert decided and all("expires_at" not in i for i in decided)


def test_a_merge_stopped_for_a_person_is_not_retried_and_every_digest_lists_it(dm_aws: DmAws) -> None:
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    merge_id = "mrg_2026_08_03_abcdef"
    dm_aws.decisions.put_item(Item={
        "pair_key": "101#102", "decision": "undoing", "holder": f"undo@{merge_id}@1",
        "lease_until": int(NOW.timestamp()), "merge_id": merge_id, "records": ["101", "102"], "by": "x",
    })
    dm_aws.merges.put_item(Item={"merge_id": merge_id, "pair_key": "101#102", "state": "undoing",
                                 "holder": f"undo@{merge_id}@1",
                                 "attention": "contact 102 may already have been re-created"})
    at(NOW + dt.timedelta(hours=1))
    assert merge.handler({"action": "sweep"}, None) == {"resumed": 0}  # a person decides
    for week in (1, 2):
        at(NOW + dt.timedelta(days=7 * week))
        merge.handler({"action": "digest"}, None)
        assert "stopped where a contact may already have been re-created: contact 102 may" in last_mail()
    assert dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]["decision"] == "undoing"
