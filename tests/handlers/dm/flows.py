"""dm's world for its function tests: a CRM holding duplicates, one weekly run through dm-block
and dm-score, the merge service, and requests to the review links."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from handlers.common.entry import registry
from handlers.common.link_tokens import Keyring
from handlers.duplicate_merger import runs, scoring
from handlers.duplicate_merger.crm import Association
from handlers.duplicate_merger.matcher import Thresholds
from handlers.duplicate_merger.merging import MergeService
from handlers.duplicate_merger.store import DynamoLedger, PairStore, QueueSender, S3Bundles
from tests.handlers.dm.conftest import KEYRING, DmAws
from testsupport.crm_generator import generate
from testsupport.dm import InMemoryCrm

NOW = dt.datetime(2026, 8, 3, 9, 0, tzinfo=dt.UTC)
THRESHOLDS = Thresholds(12.0, 0.0)
KEYS = Keyring.from_secret_string(json.dumps(KEYRING))
DEAL = Association("deals", "d1", 4)
COMPANY = Association("companies", "c1", 279)
REFERRAL = Association("contacts", "900", 7, "USER_DEFINED", "Referred by")
ENGAGEMENTS = (
    Association("notes", "n1", 201),
    Association("emails", "e1", 197),
    Association("calls", "k1", 193),
    Association("meetings", "m1", 199),
    Association("tasks", "t1", 203),
)


def crm_with_duplicates() -> InMemoryCrm:
    """Two records of Ann Lee (one with a deal, one with a company and a referral) and others."""
    crm = InMemoryCrm()
    crm.add_contact(
        "101", firstname="Ann", lastname="Zyborski", email="ann.zyborski@acme.io",
        phone="(415) 555-0101", mobilephone="(617) 555-0199", company="Acme",
        createdate="2024-01-01",
    )
    crm.add_contact(
        "102", firstname="Ann", lastname="Zyborski", email="ann.zyborski@acme.io",
        phone="415.555.0101", mobilephone="617-555-0199", city="Boston",
        createdate="2025-03-01",
    )
    crm.add_related("101", DEAL, dealname="Renewal")
    crm.add_related("102", COMPANY, name="Acme")
    crm.add_related("102", REFERRAL, firstname="Ref")
    for number, (_, props) in enumerate(generate(400, seed=11, duplicate_rate=0.0).contacts):
        crm.add_contact(str(500_000 + number), **props)
    return crm


def run_week(dm_aws: DmAws, crm: InMemoryCrm) -> dict[str, int]:
    """dm-block then dm-score over every queued message, as the queues would deliver them."""
    from handlers.common.aws_clients import client

    store = PairStore(dm_aws.pairs, dm_aws.decisions)
    runs.run(
        crm.iter_contacts(), QueueSender(dm_aws.blocks_url), store,
        now=NOW, cap=50, phone_region="US", pair_ttl_days=30,
    )
    totals: dict[str, int] = {}
    while True:
        got = client("sqs").receive_message(QueueUrl=dm_aws.blocks_url, MaxNumberOfMessages=10)
        if not got.get("Messages"):
            return totals
        for m in got["Messages"]:
            counts = scoring.process(
                m["Body"], store, QueueSender(dm_aws.merges_url),
                thresholds=THRESHOLDS, floor=-10.0, now=NOW, pair_ttl_days=30,
            )
            for k, v in counts.items():
                totals[k] = totals.get(k, 0) + v
            client("sqs").delete_message(QueueUrl=dm_aws.blocks_url, ReceiptHandle=m["ReceiptHandle"])


def queued_merges(dm_aws: DmAws) -> list[dict[str, Any]]:
    from handlers.common.aws_clients import client

    got = client("sqs").receive_message(QueueUrl=dm_aws.merges_url, MaxNumberOfMessages=10)
    return [json.loads(m["Body"]) for m in got.get("Messages", [])]


def deliver_clicks(dm_aws: DmAws) -> list[dict[str, Any]]:
    """Deliver the reviewers' handed-over clicks on dm-merges to dm-merge, as its queue trigger
    would (other messages stay queued); returns each SQS batch answer."""
    from handlers.common.aws_clients import client
    from handlers.duplicate_merger.functions import merge

    sqs, answers = client("sqs"), []
    got = sqs.receive_message(QueueUrl=dm_aws.merges_url, MaxNumberOfMessages=10)
    for m in got.get("Messages", []):
        if "claim" not in json.loads(m["Body"]):
            sqs.change_message_visibility(QueueUrl=dm_aws.merges_url, ReceiptHandle=m["ReceiptHandle"],
                                          VisibilityTimeout=0)
            continue
        event = {"Records": [{"messageId": m["MessageId"], "body": m["Body"], "eventSource": "aws:sqs"}]}
        answers.append(merge.handler(event, None))
        sqs.delete_message(QueueUrl=dm_aws.merges_url, ReceiptHandle=m["ReceiptHandle"])
    return answers


def service(dm_aws: DmAws, crm: InMemoryCrm) -> MergeService:
    return MergeService(
        crm, DynamoLedger(dm_aws.merges, dm_aws.decisions), S3Bundles(dm_aws.bucket), undo_days=90
    )


BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def request(method: str, path: str, token: str, accept: str | None = None) -> dict[str, Any]:
    return {
        "rawPath": path,
        "queryStringParameters": {"t": token},
        "headers": {"host": "dm.example.test", **({"accept": accept} if accept else {})},
        "requestContext": {"http": {"method": method, "sourceIp": "192.0.2.1"}, "requestId": "r1"},
    }


def link_token(url: str) -> str:
    return parse_qs(urlsplit(url).query)["t"][0]


# Scoring ---------------------------------------------------------------------------------


def crm_with_history() -> InMemoryCrm:
    """The same pair, the absorbed record with its own address and a history of engagements,
    a primary company each, and an email shared with the kept contact."""
    crm = crm_with_duplicates()
    crm.contacts["102"].update(email="ann@zyborski.net", hs_additional_emails="ann.z@old.example")
    for engagement in ENGAGEMENTS:
        crm.add_related("102", engagement, hs_timestamp="2025-06-01T10:00:00Z")
    crm.add_related("101", Association("emails", "e1", 197))  # one thread with both addresses
    crm.add_related("101", Association("companies", "c0", 279), name="Old Co")
    crm.add_related("101", Association("companies", "c0", 1, label="Primary"))
    crm.add_related("102", Association("companies", "c1", 1, label="Primary"))
    return crm


def at(moment: dt.datetime) -> None:
    registry.override(clock=lambda: moment)


def last_mail() -> str:
    """The last mail SES accepted (moto keeps subject and both parts)."""
    from moto.core import DEFAULT_ACCOUNT_ID  # type: ignore[attr-defined]
    from moto.ses.models import ses_backends

    message = ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages[-1]
    return json.dumps(message.__dict__, default=str)
