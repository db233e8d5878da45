"""ler's "do not re-import": after make forget erased a person from ler, a lead of theirs
received before the erasure (still in flight) is dropped at ler-normalize and at ler-push; a
lead received after it is a stranger's new lead."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from handlers.common.privacy import Person, Where, erase, find
from handlers.lead_enricher.contract import PushSettings
from handlers.lead_enricher.intake_queue import message
from handlers.lead_enricher.lead import Contact, Lead
from handlers.lead_enricher.privacy import STORES
from handlers.lead_enricher.pushing import Pusher
from tests.handlers.ler.conftest import (
    IDENTITY,
    JUNK_BUCKET,
    RAW,
    RECORDS,
    Clock,
    Ler,
    context,
    event,
    junk_lead,
)
from tests.handlers.ler.test_ler_push import clean_lead

SALT = "s" * 64
JANE = {"email": "Jane.Doe@Acme-Widgets.co.uk", "name": "jane doe", "phone": "07400 123456"}


def _forget_jane(ler: Ler) -> dt.datetime:
    """make forget's erasure of Jane from ler (the engine, with ler's salt); when it ran."""
    from handlers.common.aws_clients import client

    client("secretsmanager").put_secret_value(SecretId="dev-ler-forget-salt", SecretString=SALT)
    names = {"ler-identity": IDENTITY, "ler-raw": RAW, "ler-records": RECORDS, "ler-junk": JUNK_BUCKET}
    where = Where(names, client("dynamodb"), client("s3"))
    person = Person.of(email=JANE["email"], phone=JANE["phone"])
    erase(STORES, where, person, find(STORES, where, person), SALT)
    return dt.datetime.now(dt.UTC)


def _lead(lead_id: str, received: dt.datetime) -> str:
    return json.dumps(message(Lead(lead_id=lead_id, lane="form", received_at=received.isoformat(), fields=JANE)))


@pytest.fixture
def forgotten_at(ler: Ler) -> dt.datetime:
    return _forget_jane(ler)


def test_a_lead_received_before_the_erasure_is_dropped_at_normalize(ler: Ler, forgotten_at: dt.datetime) -> None:
    before = _lead("f-old", forgotten_at - dt.timedelta(hours=2))  # a DLQ re-drive, say
    after = _lead("f-new", forgotten_at + dt.timedelta(seconds=5))
    assert ler.normalize([before, after]) == {"batchItemFailures": []}
    assert [e["detail"]["lead_id"] for e in ler.emitted()] == ["f-new"]  # a stranger's new lead
    assert list(ler.objects(RECORDS, "normalized/")) == ["normalized/f-new.json"]


def test_a_lead_received_before_the_erasure_is_dropped_at_push(ler: Ler, forgotten_at: dt.datetime) -> None:
    pusher = Pusher(PushSettings.from_environ(), ler.crm, clock=Clock(forgotten_at))
    old = clean_lead("f-old")
    old.received_at = (forgotten_at - dt.timedelta(days=3)).isoformat()  # parked, then re-driven
    assert pusher.push(old).action == "forgotten"
    assert ler.crm.calls == [] and ler.objects(RECORDS, "records/") == {}
    new = clean_lead("f-new")
    new.received_at = (forgotten_at + dt.timedelta(seconds=5)).isoformat()
    assert pusher.push(new).action == "created"


def test_the_erasure_keeps_only_salted_hashes_with_its_time(ler: Ler, forgotten_at: dt.datetime) -> None:
    rows = ler.clients["dynamodb"].Table(IDENTITY).scan()["Items"]
    assert len(rows) == 2 and all(str(r["id_key"]).startswith("forgotten#") for r in rows)
    text = json.dumps(rows, default=str).lower()
    assert "jane" not in text and "7400123456" not in text
    for row in rows:
        assert abs(int(row["forgotten_at"]) - forgotten_at.timestamp()) < 5
        assert int(row["expires_at"]) - int(row["forgotten_at"]) == 366 * 86_400


def test_a_dropped_lead_received_before_the_erasure_is_not_kept_in_the_junk_log(
    ler: Ler, forgotten_at: dt.datetime
) -> None:
    from handlers.lead_enricher.functions import junk_writer

    old = junk_lead("f-old", "spam_phrases", (forgotten_at - dt.timedelta(hours=1)).isoformat())
    old.contact = Contact(email="jane.doe@acme-widgets.co.uk")
    assert junk_writer.handler(event("le.junk", old), context()) == {"key": None}
    assert ler.objects(JUNK_BUCKET, "junk/") == {}
