"""dm-merge: a pair merged (by a review link or the queue), restored exactly when it fails, undone
within its window; the links, the pages and the digest, and what must not happen."""

from __future__ import annotations

import copy
import datetime as dt
import json
from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.common.link_tokens import Keyring, issue_token
from handlers.duplicate_merger.crm import Association, ContactSnapshot
from handlers.duplicate_merger.functions import merge
from handlers.duplicate_merger.merging import MergeFailed, MergeService
from handlers.duplicate_merger.store import DynamoLedger, S3Bundles
from tests.handlers.dm.conftest import DmAws
from tests.handlers.dm.flows import (
    BROWSER,
    COMPANY,
    DEAL,
    ENGAGEMENTS,
    KEYS,
    NOW,
    REFERRAL,
    crm_with_duplicates,
    crm_with_history,
    deliver_clicks,
    link_token,
    queued_merges,
    request,
    run_week,
    service,
)


def test_the_undo_bundle_exists_before_the_first_crm_write(dm_aws: DmAws) -> None:
    from handlers.common.aws_clients import client

    crm = crm_with_duplicates()
    seen: list[list[str]] = []
    original = crm._write

    def write() -> None:
        listing = client("s3").list_objects_v2(Bucket=dm_aws.bucket, Prefix="undo/")
        seen.append([o["Key"] for o in listing.get("Contents", [])])
        original()

    crm._write = write  # type: ignore[method-assign]
    outcome = service(dm_aws, crm).merge("101#102", decided_by="ops@example.com", now=NOW)
    assert outcome.status == "merged"
    assert seen and seen[0] == [f"undo/{outcome.merge_id}.json"]
    bundle = json.loads(S3Bundles(dm_aws.bucket).get(f"undo/{outcome.merge_id}.json"))
    assert bundle["kept"]["id"] == "101" and bundle["merged"]["id"] == "102"
    assert {(m["type"], m["id"], m["to"]) for m in bundle["moved"]} == {
        ("companies", "c1", "101"),
        ("contacts", "900", "101"),
    }
    assert {r["id"] for r in bundle["related"]} == {"d1", "c1", "900"}
    record = dm_aws.merges.get_item(Key={"merge_id": outcome.merge_id})["Item"]
    assert record["state"] == "merged" and len(record["moved"]) == 2
    assert record["undoable_until"] == "2026-11-01"
    # dm-merges' TTL (issue 42): the record goes a day after its undo window, with its bundle.
    assert int(record["expires_at"]) == int((NOW + dt.timedelta(days=90 + 1)).timestamp())
    assert crm.state(["101"])["101"]["associations"] == sorted([DEAL, COMPANY, REFERRAL])
    assert crm.contacts["101"]["city"] == "Boston" and "102" in crm.archived


def test_two_merges_on_one_record_do_not_run_together(dm_aws: DmAws) -> None:
    crm = crm_with_duplicates()
    lock = {"merge_id": "lock#102", "holder": "mrg_other", "lease_until": int(NOW.timestamp()) + 180,
            "pair_key": "102#103"}
    dm_aws.merges.put_item(Item=lock)  # a live merge of another pair holds record 102
    before = copy.deepcopy(crm.state(["101", "102"]))
    outcome = service(dm_aws, crm).merge("101#102", decided_by="automatic", now=NOW)
    assert outcome.status == "busy" and crm.writes == 0 and crm.state(["101", "102"]) == before
    assert dm_aws.merges.get_item(Key={"merge_id": "lock#101"}).get("Item") is None  # let go
    dm_aws.merges.delete_item(Key={"merge_id": "lock#102"})
    assert service(dm_aws, crm).merge("101#102", decided_by="automatic", now=NOW).status == "merged"


def test_a_merge_failing_midway_is_restored_exactly(dm_aws: DmAws) -> None:
    crm = crm_with_duplicates()
    before = copy.deepcopy(crm.state(["101", "102"]))
    crm.fail_after_writes = 2  # two association writes succeed, the third fails
    with pytest.raises(MergeFailed) as failed:
        service(dm_aws, crm).merge("101#102", decided_by="automatic", now=NOW)
    assert crm.writes >= 2
    assert crm.state(["101", "102"]) == before
    merge_id = failed.value.outcome.merge_id
    assert dm_aws.merges.get_item(Key={"merge_id": merge_id})["Item"]["state"] == "rolled_back"
    assert dm_aws.decisions.get_item(Key={"pair_key": "101#102"}).get("Item") is None
    retry = NOW + dt.timedelta(minutes=1)  # SQS redelivers it later
    assert service(dm_aws, crm).merge("101#102", decided_by="automatic", now=retry).status == "merged"


def test_undo_after_an_edit_restores_exactly(dm_aws: DmAws) -> None:
    crm = crm_with_duplicates()
    before = copy.deepcopy(crm.state(["101", "102"]))
    svc = service(dm_aws, crm)
    merged = svc.merge("101#102", decided_by="automatic", now=NOW)
    crm.set_properties("101", {"phone": "+1 617 555 0199", "jobtitle": "CTO"})  # edited since
    later = NOW + dt.timedelta(days=10)
    undone = svc.undo(str(merged.merge_id), undone_by="ops@example.com", now=later)
    assert undone.status == "undone"
    assert crm.state(["101", "102"]) == before
    assert undone.details["overwritten"]["jobtitle"] == "CTO"
    decision = dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]
    assert decision["decision"] == "not_a_duplicate"  # never merged automatically again
    assert svc.undo(str(merged.merge_id), undone_by="x", now=later).status == "already_undone"


def test_undo_is_refused_after_undoable_until(dm_aws: DmAws) -> None:
    crm = crm_with_duplicates()
    svc = service(dm_aws, crm)
    merged = svc.merge("101#102", decided_by="automatic", now=NOW)
    late = NOW + dt.timedelta(days=91)
    assert svc.undo(str(merged.merge_id), undone_by="x", now=late).status == "undo_expired"


def test_a_merge_moves_every_engagement_and_keeps_the_absorbed_addresses(dm_aws: DmAws) -> None:
    crm = crm_with_history()
    outcome = service(dm_aws, crm).merge("101#102", decided_by="ops@example.com", now=NOW)
    assert outcome.status == "merged"
    kept = set(crm.state(["101"])["101"]["associations"])
    assert set(ENGAGEMENTS) <= kept  # notes, emails, calls, meetings, tasks
    assert {DEAL, COMPANY, REFERRAL} <= kept
    # The kept contact keeps its own primary company; the absorbed one's stays associated.
    assert Association("companies", "c0", 1) in kept and Association("companies", "c1", 1) not in kept
    assert crm.links["102"] == set()  # nothing left behind on the archived record
    record = dm_aws.merges.get_item(Key={"merge_id": outcome.merge_id})["Item"]
    moved = {(m["type"], m["id"], int(m["type_id"])): m for m in record["moved"]}
    assert {k[0] for k in moved} == {"companies", "contacts", "notes", "emails", "calls", "meetings", "tasks"}
    assert moved[("emails", "e1", 197)]["on_kept"] is True  # already on both: only removed
    assert moved[("companies", "c1", 1)]["on_kept"] is True  # not created: one primary
    assert outcome.details["engagements"] == 5
    assert outcome.details["emails"] == ["ann@zyborski.net", "ann.z@old.example"]
    assert crm.contacts["101"]["hs_additional_emails"] == "ann@zyborski.net;ann.z@old.example"
    assert crm.contacts["101"]["email"] == "ann.zyborski@acme.io"


def test_undo_gives_back_the_engagements_and_the_addresses(dm_aws: DmAws) -> None:
    crm = crm_with_history()
    before = copy.deepcopy(crm.state(["101", "102"]))
    svc = service(dm_aws, crm)
    merged = svc.merge("101#102", decided_by="automatic", now=NOW)
    undone = svc.undo(str(merged.merge_id), undone_by="ops@example.com", now=NOW + dt.timedelta(days=3))
    assert undone.status == "undone"
    assert crm.state(["101", "102"]) == before
    assert "hs_additional_emails" not in crm.contacts["101"]


# Links ------------------------------------------------------------------------------------


def test_review_confirm_and_undo_through_the_links(dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch) -> None:
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    registry.override(clock=lambda: NOW)
    review = issue_token(KEYS, subject="101#102", action="review", ttl_seconds=86_400, now=NOW.timestamp())
    page = merge.handler(request("GET", "/review", review), None)
    assert page["statusCode"] == 200 and "Confirm" in page["body"] and crm.writes == 0
    # #40: both limits, truthfully: the undo link's life and the undo bundle's (dev: 30 and 90).
    assert ("You can undo it for 30 days from the page you get after merging (dm keeps what an "
            "undo needs for 90 days).") in page["body"]
    confirm_url = page["body"].split("action='")[1].split("'")[0].replace("&amp;", "&")
    assert confirm_url.startswith("/confirm?t="), "origin-relative: works on http and https"
    answer = merge.handler(request("POST", "/confirm", link_token(confirm_url)), None)
    # #41: the click is claimed and queued; HubSpot is neither read nor written while it waits.
    assert answer["statusCode"] == 202 and crm.writes == 0 and "102" not in crm.archived
    assert "Merging Ann Zyborski (two records) now." in answer["body"]
    result_url = answer["body"].split("href='")[1].split("'")[0].replace("&amp;", "&")
    assert result_url.startswith("/confirm?t=") and link_token(result_url) == link_token(confirm_url)
    waiting = merge.handler(request("GET", "/confirm", link_token(result_url)), None)
    assert waiting["statusCode"] == 202 and "Merging Ann Zyborski (two records) now." in waiting["body"]
    assert deliver_clicks(dm_aws) == [{"batchItemFailures": []}]
    assert "102" in crm.archived and crm.writes > 0
    result = merge.handler(request("GET", "/confirm", link_token(result_url), BROWSER), None)
    assert result["statusCode"] == 409 and "(two records) were already merged by " in result["body"]
    undo_url = result["body"].split("href='")[1].split("'")[0].replace("&amp;", "&")
    assert undo_url.startswith("/undo?t=")
    confirm_undo = merge.handler(request("GET", "/undo", link_token(undo_url)), None)
    assert "Ann Zyborski&#x27;s two records were merged into one: the older was kept." in confirm_undo["body"]
    assert "(id " not in confirm_undo["body"]
    undoing = merge.handler(request("POST", "/undo", link_token(undo_url)), None)
    assert undoing["statusCode"] == 202 and "Undoing the merge of" in undoing["body"]
    assert "102" not in crm.contacts or "102" in crm.archived
    assert deliver_clicks(dm_aws) == [{"batchItemFailures": []}]
    undone = merge.handler(request("GET", "/undo", link_token(undo_url), BROWSER), None)
    assert undone["statusCode"] == 409 and "Undone: Ann Zyborski (two records)" in undone["body"]
    assert "102" in crm.contacts and "102" not in crm.archived


def test_a_reused_link_does_nothing(dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch) -> None:
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    registry.override(clock=lambda: NOW)
    token = issue_token(KEYS, subject="101#102", action="confirm", ttl_seconds=3600, now=NOW.timestamp())
    assert merge.handler(request("POST", "/confirm", token), None)["statusCode"] == 202
    again = merge.handler(request("POST", "/confirm", token), None)  # before the queue ran
    assert again["statusCode"] == 409 and json.loads(again["body"])["error"]["code"] == "link_used"
    assert len(deliver_clicks(dm_aws)) == 1 and "102" in crm.archived  # one merge, not two
    writes, state = crm.writes, copy.deepcopy(crm.state(["101", "102"]))
    again = merge.handler(request("POST", "/confirm", token), None)
    assert again["statusCode"] == 409 and json.loads(again["body"])["error"]["code"] == "link_used"
    assert deliver_clicks(dm_aws) == []
    assert crm.writes == writes and crm.state(["101", "102"]) == state


def test_a_check_proposal_is_claimed_then_refused_before_the_crm(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """make verify's proposal (marked check in dm-pairs): confirm takes and releases the claim,
    answers 409 check, and the CRM is never read or written; unmarked, the link merges."""
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    registry.override(clock=lambda: NOW)
    dm_aws.pairs.update_item(Key={"pair_key": "101#102"}, UpdateExpression="SET #c = :t",
                             ExpressionAttributeNames={"#c": "check"}, ExpressionAttributeValues={":t": True})
    token = issue_token(KEYS, subject="101#102", action="confirm", ttl_seconds=3600, now=NOW.timestamp())
    read: list[str] = []
    snapshot = crm.snapshot

    def recording(contact_id: str) -> ContactSnapshot | None:
        read.append(contact_id)
        return snapshot(contact_id)

    monkeypatch.setattr(crm, "snapshot", recording)
    for _ in range(2):  # released with its link: the same link is refused the same way
        answer = merge.handler(request("POST", "/confirm", token), None)
        assert answer["statusCode"] == 409 and json.loads(answer["body"])["error"]["code"] == "check"
    assert crm.writes == 0 and read == []
    assert "Item" not in dm_aws.decisions.get_item(Key={"pair_key": "101#102"})
    assert dm_aws.merges.scan()["Items"] == []  # no lock, no link marker left
    dm_aws.pairs.update_item(Key={"pair_key": "101#102"}, UpdateExpression="REMOVE #c",
                             ExpressionAttributeNames={"#c": "check"})
    assert merge.handler(request("POST", "/confirm", token), None)["statusCode"] == 202


def test_a_browser_gets_a_page_naming_the_pair_for_every_outcome_and_a_program_gets_json(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handlers.common import settings

    monkeypatch.setenv("TIMEZONE", "America/New_York")  # a stack's dm schedule_timezone
    settings.reset()
    registry.clear(merge)
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    registry.override(clock=lambda: NOW)

    def token(action: str, subject: str = "101#102", ttl: int = 3600) -> str:
        return issue_token(KEYS, subject=subject, action=action, ttl_seconds=ttl, now=NOW.timestamp())

    def page(answer: dict[str, Any], status: int, *words: str) -> None:
        assert answer["statusCode"] == status, answer
        assert answer["headers"]["content-type"].startswith("text/html")
        assert not answer["body"].lstrip().startswith("{")
        for word in words:
            assert word in answer["body"], (word, answer["body"])

    one_tap = merge.handler(request("GET", "/confirm", token("confirm"), BROWSER), None)
    page(one_tap, 200, "Ann Zyborski", "Confirm: merge them")
    assert crm.writes == 0  # the digest's one-tap link only opens the page
    confirm = token("confirm")
    page(merge.handler(request("POST", "/confirm", confirm, BROWSER), None), 202,
         "Merging Ann Zyborski (two records) now.", "See the result")
    deliver_clicks(dm_aws)
    page(merge.handler(request("POST", "/confirm", confirm, BROWSER), None), 409,
         "This link was already used", "Ann Zyborski (two records) were already merged by ",
         "You can still undo this merge until", "Undo this merge")
    page(merge.handler(request("GET", "/review", token("review"), BROWSER), None), 409,
         "Ann Zyborski (two records) were already merged by ", "Mon 3 Aug 2026, 05:00 EDT")
    page(merge.handler(request("POST", "/confirm", confirm + "x", BROWSER), None), 403, "not valid")
    registry.override(clock=lambda: NOW + dt.timedelta(hours=2))
    page(merge.handler(request("POST", "/reject", token("reject"), BROWSER), None), 410, "expired")
    # A program that asks for JSON (or names no type) keeps the JSON error.
    for accept in ("application/json", None, "*/*", "application/json, text/html;q=0.5"):
        answer = merge.handler(request("POST", "/reject", token("reject"), accept), None)
        assert answer["statusCode"] == 410
        assert json.loads(answer["body"])["error"]["code"] == "link_expired"


def test_an_expired_or_forged_link_does_nothing(dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch) -> None:
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    token = issue_token(KEYS, subject="101#102", action="confirm", ttl_seconds=3600, now=NOW.timestamp())
    registry.override(clock=lambda: NOW + dt.timedelta(hours=2))
    expired = merge.handler(request("POST", "/confirm", token), None)
    assert expired["statusCode"] == 410
    registry.override(clock=lambda: NOW)
    forged = Keyring.single("k1", "f" * 40)
    bad = issue_token(forged, subject="101#102", action="confirm", ttl_seconds=3600, now=NOW.timestamp())
    assert merge.handler(request("POST", "/confirm", bad), None)["statusCode"] == 403
    reject = issue_token(KEYS, subject="101#102", action="reject", ttl_seconds=3600, now=NOW.timestamp())
    assert merge.handler(request("POST", "/confirm", reject), None)["statusCode"] == 403
    assert merge.handler(request("DELETE", "/confirm", token), None)["statusCode"] == 404
    assert crm.writes == 0
    assert dm_aws.decisions.get_item(Key={"pair_key": "101#102"}).get("Item") is None
    assert "Items" not in dm_aws.merges.scan() or not [
        i for i in dm_aws.merges.scan()["Items"] if str(i["merge_id"]).startswith(("link#", "mrg_"))
    ]


def test_automatic_merges_arrive_on_the_merge_queue(dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch) -> None:
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    registry.override(clock=lambda: NOW)
    (message,) = queued_merges(dm_aws)
    event = {"Records": [{"messageId": "m1", "body": json.dumps(message), "eventSource": "aws:sqs"}]}
    assert merge.handler(event, None) == {"batchItemFailures": []}
    assert "102" in crm.archived
    assert merge.handler(event, None) == {"batchItemFailures": []}  # duplicate delivery: no-op
    decision = dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]
    assert decision["decided_by"] == "automatic" and decision["decision"] == "merged"


def test_a_merge_request_0_1_0_wrote_is_merged_and_a_newer_format_refused(dm_aws: DmAws) -> None:
    """dm-merges: dm-score stamps version 1 (dm-merge's own clicks are 2); 0.1.0's message (no
    ``v``) is read as 1, a newer one is refused into the DLQ untouched (handlers.common.formats)."""
    crm = crm_with_duplicates()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    registry.override(clock=lambda: NOW)
    (message,) = queued_merges(dm_aws)
    assert message["v"] == 1
    newer = {"messageId": "newer", "body": json.dumps({**message, "v": 3}), "eventSource": "aws:sqs"}
    assert merge.handler({"Records": [newer]}, None) == {"batchItemFailures": [{"itemIdentifier": "newer"}]}
    assert crm.writes == 0
    unversioned = {k: v for k, v in message.items() if k != "v"}
    old = {"messageId": "old", "body": json.dumps(unversioned), "eventSource": "aws:sqs"}
    assert merge.handler({"Records": [old]}, None) == {"batchItemFailures": []}
    assert "102" in crm.archived


def test_the_weekly_digest_lists_proposals_and_undo_links(dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch) -> None:
    from handlers.common.aws_clients import client

    crm = crm_with_duplicates()
    crm.add_contact("301", firstname="Zed", lastname="Quarrington", email="zq@one.io", city="Tulsa")
    crm.add_contact("302", firstname="Zed", lastname="Quarington", email="zed.q@two.io", city="Tulsa")
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    registry.override(clock=lambda: NOW)
    (message,) = queued_merges(dm_aws)
    merge.handler({"Records": [{"messageId": "m1", "body": json.dumps(message)}]}, None)
    result = merge.handler({"action": "digest"}, None)
    assert result["sent"] is True and result["automatic"] == 1
    assert result["proposals"] == len(list(registry.service(merge).pairs.review("2026-W32", "propose")))
    assert client("ses").get_send_quota()["SentLast24Hours"] == 1


def test_a_recreated_contact_gets_its_secondary_emails_back(dm_aws: DmAws) -> None:
    crm = crm_with_history()
    svc = service(dm_aws, crm)
    merged = svc.merge("101#102", decided_by="automatic", now=NOW)
    original_restore = crm.restore

    def recreate(snapshot: Any) -> str:
        # As HubSpot does: a new record, without the read-only secondary emails.
        new_id = original_restore(snapshot)
        crm.contacts[new_id].pop("hs_additional_emails", None)
        return new_id

    crm.restore = recreate  # type: ignore[method-assign]
    assert svc.undo(str(merged.merge_id), undone_by="x", now=NOW).status == "undone"
    assert crm.contacts["102"]["hs_additional_emails"] == "ann.z@old.example"
    assert "hs_additional_emails" not in crm.contacts["101"]


def test_an_undo_counts_its_merge_as_not_a_duplicate_and_a_broken_tally_decides_nothing(
    dm_aws: DmAws,
) -> None:
    from handlers.duplicate_merger.matcher import counter_name
    from handlers.duplicate_merger.store import DecisionTally

    crm = crm_with_duplicates()
    tally = DecisionTally(dm_aws.decisions)
    svc = MergeService(
        crm, DynamoLedger(dm_aws.merges, dm_aws.decisions), S3Bundles(dm_aws.bucket),
        undo_days=90, shown=lambda key: (14.2, "person"), tally=tally,
    )
    merged = svc.merge("101#102", decided_by="automatic", now=NOW)
    assert merged.status == "merged"
    item = dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]
    assert (float(item["score"]), item["evidence"]) == (14.2, "person")
    later = NOW + dt.timedelta(days=8)  # the next ISO week
    assert svc.undo(str(merged.merge_id), undone_by="ops@example.com", now=later).status == "undone"
    item = dm_aws.decisions.get_item(Key={"pair_key": "101#102"})["Item"]
    assert item["decision"] == "not_a_duplicate" and float(item["score"]) == 14.2
    weeks = ["2026-W32", "2026-W33"]
    assert tally.counts(weeks) == {counter_name("person", 14.2, True): 0,
                                   counter_name("person", 14.2, False): 1}

    class Broken:
        def count(self, week: str, changes: Any) -> None:
            raise RuntimeError("throttled")

    other = crm_with_duplicates()
    svc = MergeService(
        other, DynamoLedger(dm_aws.merges, dm_aws.decisions), S3Bundles(dm_aws.bucket),
        undo_days=90, shown=lambda key: (3.0, "name"), tally=Broken(),
    )
    assert svc.reject("301#302", decided_by="ops@example.com", now=NOW).status == "rejected"
    assert dm_aws.decisions.get_item(Key={"pair_key": "301#302"})["Item"]["evidence"] == "name"


def test_merge_retries_every_failing_message_as_before(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dm-merge's queue carries only dm-score's messages: a pair gone is handled, anything
    that raises (unreadable, busy, the CRM down) goes back to the queue and then to its DLQ."""
    crm = crm_with_duplicates()
    registry.override(merge, crm=lambda: crm)
    registry.override(clock=lambda: NOW)
    records = [
        {"messageId": "gone", "body": json.dumps({"pair_key": "7#8"}), "eventSource": "aws:sqs"},
        {"messageId": "unreadable", "body": "{not json", "eventSource": "aws:sqs"},
    ]
    answer = merge.handler({"Records": records}, None)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "unreadable"}]}
    assert crm.writes == 0
