"""dm-merge's clicks (issue #41): a reviewer's confirm or undo takes the claim and is queued on
dm-merges, so the person waits on DynamoDB and SQS only; the queue finishes it with HubSpot.
What a click could go wrong on (the queue refusing the message, the sweep getting there first)
still ends in exactly one merge or undo, or in nothing changed with the link usable again."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from handlers.common.entry import registry
from handlers.common.link_tokens import issue_token
from handlers.duplicate_merger.functions import merge
from handlers.duplicate_merger.merging import LOCK_LEASE_SECONDS
from handlers.duplicate_merger.store import QueueSender
from tests.handlers.dm.conftest import DmAws
from tests.handlers.dm.flows import (
    BROWSER,
    KEYS,
    NOW,
    at,
    crm_with_duplicates,
    deliver_clicks,
    queued_merges,
    request,
    run_week,
    service,
)
from testsupport.dm import InMemoryCrm

REVIEWER = "ops@example.com"


def peek(dm_aws: DmAws) -> list[dict[str, object]]:
    """The queued messages, left visible for the delivery that follows."""
    from handlers.common.aws_clients import client

    got = client("sqs").receive_message(QueueUrl=dm_aws.merges_url, MaxNumberOfMessages=10,
                                        VisibilityTimeout=0)
    return [json.loads(m["Body"]) for m in got.get("Messages", [])]


def token(subject: str, action: str) -> str:
    return issue_token(KEYS, subject=subject, action=action, ttl_seconds=86_400, now=NOW.timestamp())


def world(dm_aws: DmAws) -> tuple[InMemoryCrm, list[int]]:
    """The week's pairs, and dm-merge's CRM counting how often it is built (the write
    credential is read each time)."""
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    queued_merges(dm_aws)  # the run's automatic request stays hidden: the clicks are the subject
    built: list[int] = []

    def build() -> InMemoryCrm:
        built.append(1)
        return crm

    registry.override(merge, crm=build)
    at(NOW)
    return crm, built


def test_a_confirm_click_claims_and_queues_without_the_crm(dm_aws: DmAws) -> None:
    crm, built = world(dm_aws)
    answer = merge.handler(request("POST", "/confirm", token("101#102", "confirm"), BROWSER), None)
    assert answer["statusCode"] == 202 and "Merging Ann Zyborski (two records) now." in answer["body"]
    assert built == [] and crm.writes == 0  # no credential read, no HubSpot call
    decision = dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]
    assert decision["decision"] == "merging" and decision["by"] == REVIEWER
    (message,) = peek(dm_aws)
    assert message["v"] == 2 and message["claim"] == {
        "kind": "merging", "holder": decision["holder"], "merge_id": decision["merge_id"],
        "by": REVIEWER}
    assert deliver_clicks(dm_aws) == [{"batchItemFailures": []}]
    assert built and "102" in crm.archived
    settled = dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]
    assert settled["decision"] == "merged" and settled["decided_by"] == REVIEWER


def test_a_confirm_the_queue_refuses_changes_nothing_and_its_link_works_again(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    crm, _ = world(dm_aws)
    confirm = token("101#102", "confirm")
    with monkeypatch.context() as m:
        m.setattr(QueueSender, "send", lambda self, message: (_ for _ in ()).throw(RuntimeError("SQS down")))
        refused = merge.handler(request("POST", "/confirm", confirm, BROWSER), None)
    assert refused["statusCode"] == 503 and "The link still works" in refused["body"]
    assert dm_aws.decisions.get_item(Key={"pair_key": "101#102"}).get("Item") is None
    assert [i for i in dm_aws.merges.scan()["Items"] if str(i["merge_id"]).startswith(("link#", "lock#"))] == []
    assert merge.handler(request("POST", "/confirm", confirm, BROWSER), None)["statusCode"] == 202
    assert deliver_clicks(dm_aws) == [{"batchItemFailures": []}] and "102" in crm.archived


def test_a_click_the_sweep_put_back_before_its_delivery_is_still_merged_once(dm_aws: DmAws) -> None:
    """The queue was slower than the claim's lease and the sweep let the untouched claim go;
    the late message then merges as the reviewer asked, once."""
    crm, _ = world(dm_aws)
    assert merge.handler(request("POST", "/confirm", token("101#102", "confirm")), None)["statusCode"] == 202
    at(NOW + dt.timedelta(seconds=LOCK_LEASE_SECONDS + 60))
    assert merge.handler({"action": "sweep"}, None) == {"resumed": 1, "rolled_back": 1}
    assert deliver_clicks(dm_aws) == [{"batchItemFailures": []}]
    assert "102" in crm.archived
    merges = [i for i in dm_aws.merges.scan()["Items"] if str(i["merge_id"]).startswith("mrg_")]
    assert [m["state"] for m in merges] == ["merged"]
    assert dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]["decided_by"] == REVIEWER


def test_an_undo_the_queue_refuses_is_finished_by_the_sweep(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    crm, _ = world(dm_aws)
    merged = service(dm_aws, crm).merge("101#102", decided_by="ops@example.com", now=NOW)
    undo = token(str(merged.merge_id), "undo")
    with monkeypatch.context() as m:
        m.setattr(QueueSender, "send", lambda self, message: (_ for _ in ()).throw(RuntimeError("SQS down")))
        answer = merge.handler(request("POST", "/undo", undo, BROWSER), None)
    assert answer["statusCode"] == 202 and "Undoing the merge of" in answer["body"]
    page = merge.handler(request("GET", "/undo", undo, BROWSER), None)
    assert page["statusCode"] == 202  # the result link says it is still under way
    at(NOW + dt.timedelta(seconds=LOCK_LEASE_SECONDS + 60))
    assert merge.handler({"action": "sweep"}, None) == {"resumed": 1, "undone": 1}
    assert "102" in crm.contacts and "102" not in crm.archived
    done = merge.handler(request("GET", "/undo", undo, BROWSER), None)
    assert done["statusCode"] == 409 and "both contacts are back" in done["body"]
    assert json.loads(merge.handler(request("GET", "/undo", undo), None)["body"])["error"]["code"] == (
        "already_undone")
