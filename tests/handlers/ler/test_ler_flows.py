"""What issue 8 calls done, end to end through the handlers on moto with fake CRM/provider/model.

Each test drives real handler entry points: intake by Function URL or by the S3 notification
ler-raw really sent, normalize by an SQS event, every later stage by the EventBridge event
its predecessor really put on the (moto) default bus.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from email.message import EmailMessage
from typing import Any
from urllib.parse import unquote_plus

import pytest

from handlers.common.entry import registry
from handlers.lead_enricher.functions import digest, retry
from tests.handlers.ler.conftest import CACHE, JANE, JUNK_BUCKET, RAW, RECORDS, Ler, context

ACME = {
    "company_name": "Acme Widgets",
    "employees": 40,
    "company_city": "Leeds",
    "industry": "Manufacturing",
}


def creates(ler: Ler) -> list[tuple[str, str, dict[str, str]]]:
    return [c for c in ler.crm.calls if c[0] == "create"]


def updates(ler: Ler) -> list[tuple[str, str, dict[str, str]]]:
    return [c for c in ler.crm.calls if c[0] == "update"]


def record_of(ler: Ler, lead_id: str) -> dict[str, Any]:
    return ler.objects(RECORDS, f"records/{lead_id}.json")[f"records/{lead_id}.json"]


def lead_id_of(response: dict[str, Any]) -> str:
    assert response["statusCode"] == 202, response
    return str(json.loads(response["body"])["lead_id"])


def mime(**headers: str) -> bytes:
    message = EmailMessage()
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(
        "Hello,\n\nWe need 50 units delivered to our Leeds office.\n\n"
        "Phone: 07700 123456\nCompany: Brightside Bakery Ltd\n"
    )
    return message.as_bytes()


# One lead through each lane ---------------------------------------------------------------


def test_a_form_lead_reaches_the_crm(ler: Ler) -> None:
    ler.provider.profiles["acme-widgets.co.uk"] = ACME
    lead_id = lead_id_of(ler.post(JANE))
    events = [e["detail-type"] for e in ler.pump()]

    assert events == ["le.normalized", "le.enriched", "le.deduped", "le.clean"]
    [(_, crm_id, properties)] = creates(ler)
    assert properties == {
        "email": "jane.doe@acme-widgets.co.uk",
        "firstname": "Jane",
        "lastname": "Doe",
        "phone": "+447400123456",
        "company": "Acme Widgets Ltd",
        "country": "GB",
        "website": "acme-widgets.co.uk",
        "city": "Leeds",
        "numberofemployees": "40",
        "lifecyclestage": "lead",
        "hs_lead_status": "NEW",
    }
    record = record_of(ler, lead_id)
    assert record["crm"] == {"crm_id": crm_id, "action": "created", "filled": []}
    assert record["enrichment"]["fields"]["employees"] == {
        "value": 40,
        "source": "fake",
        "as_of": dt.datetime.now(dt.UTC).date().isoformat(),
    }
    raw = ler.objects(RAW, "form/")
    assert len(raw) == 1 and next(iter(raw.values()))["email"] == JANE["email"]
    assert f"normalized/{lead_id}.json" in ler.objects(RECORDS, "normalized/")
    for key in (
        "EMAIL#jane.doe@acme-widgets.co.uk",
        "PHONE#+447400123456",
        "FP#janedoe|acmewidgets",
    ):
        assert (ler.identity(key) or {}).get("crm_id") == crm_id, key
    assert ler.bedrock.calls == []  # nothing was ambiguous: no model call


def test_a_mail_lead_reaches_the_crm(ler: Ler) -> None:
    ler.put_raw(
        "inbound/0000000abc",
        mime(
            From="Web form <forms@brightside-bakery.co.uk>",
            Reply_To="Sam O'Brien <sam.obrien@brightside-bakery.co.uk>",
            To="hello@example.com",
            Subject="Wholesale enquiry",
            X_SES_Spam_Verdict="PASS",
            X_SES_Virus_Verdict="PASS",
        ),
    )
    [counts] = ler.deliver_s3()
    assert counts == {"queued": 1, "junk": 0, "ignored": 0}
    ler.pump()

    [(_, crm_id, properties)] = creates(ler)
    assert properties["email"] == "sam.obrien@brightside-bakery.co.uk"
    assert (properties["firstname"], properties["lastname"]) == ("Sam", "O'Brien")
    assert properties["phone"] == "+447700123456"
    assert properties["company"] == "Brightside Bakery Ltd"
    [record] = ler.objects(RECORDS, "records/").values()
    assert record["lane"] == "mail" and record["raw"]["key"] == "inbound/0000000abc"
    assert record["message"].startswith("Wholesale enquiry")
    assert record["crm"]["crm_id"] == crm_id


def test_an_uploaded_csv_reaches_the_crm_one_lead_per_row(ler: Ler) -> None:
    csv = (
        b"First Name;Surname;E-mail Address;Telephone;Organisation;Country\n"
        b"ada;LOVELACE;ada@analytical-engines.co.uk;020 7946 0018;Analytical Engines;England\n"
        b";;;;;\n"
        b"Grace;Hopper;grace@cobol.example.io;(415) 555-2671;Cobol Inc;USA\n"
    )
    ler.put_raw("upload/2026-11-expo.csv", csv)
    [counts] = ler.deliver_s3()
    assert counts == {"queued": 2, "junk": 0, "ignored": 0}
    ler.pump()

    made = {p["email"]: p for _, _, p in creates(ler)}
    assert set(made) == {"ada@analytical-engines.co.uk", "grace@cobol.example.io"}
    assert (
        made["ada@analytical-engines.co.uk"]["firstname"],
        made["ada@analytical-engines.co.uk"]["lastname"],
    ) == ("Ada", "Lovelace")
    assert made["ada@analytical-engines.co.uk"]["country"] == "GB"
    assert made["grace@cobol.example.io"]["phone"] == "+14155552671"
    assert made["grace@cobol.example.io"]["country"] == "US"
    rows = sorted(r["raw"]["row"] for r in ler.objects(RECORDS, "records/").values())
    assert rows == ["1", "3"]


# Matching identities link instead of creating -------------------------------------------


@pytest.mark.parametrize(
    ("id_key", "lead"),
    [
        (
            "EMAIL#jane.doe@acme-widgets.co.uk",
            {"email": "jane.doe@acme-widgets.co.uk", "name": "J Doe"},
        ),
        ("PHONE#+447400123456", {"email": "jd.private@gmail.com", "phone": "+44 7400 123456"}),
        (
            "FP#janedoe|acmewidgets",
            {"email": "jane@gmail.com", "name": "Jane Doe", "company": "ACME Widgets Limited"},
        ),
    ],
    ids=["email", "phone", "fingerprint"],
)
def test_a_lead_matching_an_identity_links_instead_of_creating(
    ler: Ler, id_key: str, lead: dict[str, str]
) -> None:
    existing = ler.crm.add(email="jane.doe@acme-widgets.co.uk", firstname="Jane", lastname="Doe")
    ler.seed_identity(id_key, existing.crm_id, person_name="Jane Doe", company="Acme Widgets Ltd")
    lead_id = lead_id_of(ler.post({**lead, "message": "Following up on my last order"}))
    ler.pump()

    assert creates(ler) == []
    record = record_of(ler, lead_id)
    assert record["dedupe"]["verdict"] == f"link:{existing.crm_id}"
    assert record["dedupe"]["matched_on"] == id_key.split("#")[0]
    assert record["crm"]["action"] == "linked"
    assert ler.crm.contacts[existing.crm_id].properties["email"] == "jane.doe@acme-widgets.co.uk"


def test_a_persons_field_in_the_crm_is_never_overwritten(ler: Ler) -> None:
    existing = ler.crm.add(
        email="jane.doe@acme-widgets.co.uk",
        firstname="Janet",
        lastname="Doe-Smith",
        phone="+447700900001",
        jobtitle="",
        company=None,
    )
    lead_id = lead_id_of(ler.post({**JANE, "job_title": "Head of Purchasing"}))
    ler.pump()

    assert creates(ler) == []
    [(_, crm_id, written)] = updates(ler)
    assert crm_id == existing.crm_id
    assert written == {
        "jobtitle": "Head of Purchasing",
        "company": "Acme Widgets Ltd",
        "country": "GB",
        "website": "acme-widgets.co.uk",
    }
    kept = ler.crm.contacts[existing.crm_id].properties
    assert (kept["firstname"], kept["lastname"], kept["phone"]) == (
        "Janet",
        "Doe-Smith",
        "+447700900001",
    )
    assert record_of(ler, lead_id)["crm"]["filled"] == ["company", "country", "jobtitle", "website"]


# Enrichment outage, then a retry -----------------------------------------------------------


def test_a_provider_outage_ends_pending_and_a_later_retry_succeeds(ler: Ler, invoker: Any) -> None:
    ler.provider.down = True
    lead_id = lead_id_of(ler.post(JANE))
    ler.pump()

    [(_, crm_id, first)] = creates(ler)
    assert "numberofemployees" not in first
    record = record_of(ler, lead_id)
    assert record["enrichment"]["status"] == "pending"
    marker = (
        ler.clients["dynamodb"].Table(CACHE).get_item(Key={"domain": f"pending#{lead_id}"})["Item"]
    )
    assert (marker["status"], marker["pass_no"]) == ("pending", 0)

    ler.provider.down = False
    ler.provider.profiles["acme-widgets.co.uk"] = ACME
    later = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=16)
    registry.override(clock=lambda: later)
    report = retry.handler({"job": "ler-retry"}, context())
    assert report["pending_retried"] == 1
    ler.pump()

    assert len(creates(ler)) == 1  # the same contact, not a second one
    [(_, updated, filled)] = updates(ler)
    assert updated == crm_id
    assert filled == {"city": "Leeds", "numberofemployees": "40"}
    record = record_of(ler, lead_id)
    assert (record["pass_no"], record["enrichment"]["status"]) == (1, "enriched")
    assert record["dedupe"]["verdict"] == f"link:{crm_id}"
    marker = (
        ler.clients["dynamodb"].Table(CACHE).get_item(Key={"domain": f"pending#{lead_id}"})["Item"]
    )
    assert (marker["status"], marker["pass_no"]) == ("resolved", 1)
    assert retry.handler({"job": "ler-retry"}, context())["pending_retried"] == 0


# Junk ----------------------------------------------------------------------------------------


def test_a_junk_lead_lands_in_ler_junk_with_its_reason_and_in_the_digest(ler: Ler) -> None:
    bot = lead_id_of(
        ler.post({"email": "sales@growth-hackers.co.uk", "name": "Max", "_gotcha": "x"})
    )
    spam = lead_id_of(
        ler.post(
            {
                "email": "outreach@rank-agency.co.uk",
                "name": "Mike Rank",
                "message": "Get your site on the first page of Google! http://a.example https://b.example "
                "http://c.example www.d.example",
            }
        )
    )
    real = lead_id_of(ler.post(JANE))
    ler.pump()

    junk = {entry["lead_id"]: entry for entry in ler.objects(JUNK_BUCKET, "junk/").values()}
    assert set(junk) == {bot, spam}
    assert (junk[bot]["reason"], junk[bot]["stage"]) == ("honeypot", "intake")
    assert (junk[spam]["reason"], junk[spam]["stage"]) == ("many_links", "filter")
    assert junk[spam]["lead"]["screening"]["decision"] == "junk"
    assert [p["email"] for _, _, p in creates(ler)] == ["jane.doe@acme-widgets.co.uk"]
    assert real not in junk

    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).date()
    summary = digest.handler({"day": tomorrow.isoformat()}, context())
    assert summary["total"] == 2
    assert summary["by_reason"] == {"honeypot": 1, "many_links": 1}
    [mail] = ler.sent_mail()
    assert mail.destinations["ToAddresses"] == ["ops@example.com"]
    assert "2 junk leads" in mail.subject
    assert "(honeypot): 1" in mail.body and "Many links in the message (many_links): 1" in mail.body
    assert "outreach@rank-agency.co.uk" in mail.body


# The model is bounded by the rules ----------------------------------------------------------


def test_a_model_answer_outside_the_rules_is_discarded(ler: Ler) -> None:
    ler.bedrock.add_tool_answer(
        {
            "first_name": "Janet",
            "last_name": "Doe",
            "country_code": "XX",
        }  # invented name, no such country
    )
    lead_id = lead_id_of(
        ler.post(
            {
                "email": "jane.doe@acme-widgets.co.uk",
                "name": "Jane Doe - Acme Widgets",
                "country": "Blighty",
            }
        )
    )
    ler.pump()

    assert len(ler.bedrock.calls) == 1
    record = record_of(ler, lead_id)
    assert record["normalize"]["model"] == "discarded"
    assert set(record["normalize"]["discarded"]) == {"name", "country"}
    assert record["normalize"]["accepted"] == []
    assert (record["contact"]["first_name"], record["contact"]["last_name"]) == ("Jane", "Doe")
    assert record["contact"]["country"] is None
    [(_, _, properties)] = creates(ler)
    assert properties["firstname"] == "Jane" and "country" not in properties


# Loops and redeliveries ----------------------------------------------------------------------


def test_intake_writing_to_ler_raw_does_not_trigger_itself(ler: Ler) -> None:
    lead_id_of(ler.post(JANE))
    assert list(ler.objects(RAW, "form/"))  # intake kept the raw payload in ler-raw...
    assert ler.s3_notifications() == []  # ...and ler-raw notified nobody

    ler.put_raw("upload/one.csv", b"email,name\nada@analytical-engines.co.uk,Ada Lovelace\n")
    notifications = ler.s3_notifications()
    keys = [unquote_plus(r["s3"]["object"]["key"]) for n in notifications for r in n["Records"]]
    assert keys == ["upload/one.csv"]

    # Even a notification for intake's own prefix (were one ever wired) is not read.
    own = json.loads(json.dumps(notifications[0]))
    own["Records"][0]["s3"]["object"]["key"] = next(iter(ler.objects(RAW, "form/")))
    from handlers.lead_enricher.functions import intake

    assert intake.handler(own, context()) == {"queued": 0, "junk": 0, "ignored": 1}


def test_redelivered_and_reordered_events_create_nothing_twice(ler: Ler) -> None:
    ler.provider.profiles["acme-widgets.co.uk"] = ACME
    ler.post(JANE)
    ler.post(JANE)  # the same form posted twice: the same lead
    ler.post(
        {
            "email": "x@growth-hackers.co.uk",
            "name": "Bot",
            "message": "seo backlinks http://a.example https://b.example http://c.example www.d.example",
        }
    )
    ler.put_raw(
        "upload/grace.csv", b"email,name,company\ngrace@cobol.example.io,Grace Hopper,Cobol Inc\n"
    )
    [notification] = ler.s3_notifications()
    from handlers.lead_enricher.functions import intake

    intake.handler(notification, context())
    intake.handler(notification, context())  # S3 delivers at least once

    for _ in range(10):
        bodies = ler.queued()
        for body in bodies + bodies[::-1]:  # every message twice, the second time reversed
            ler.normalize([body])
        events = ler.emitted()
        if not bodies and not events:
            break
        for event in events[::-1] + events:  # reordered, then every event again
            ler.deliver(event)

    assert sorted(p["email"] for _, _, p in creates(ler)) == [
        "grace@cobol.example.io",
        "jane.doe@acme-widgets.co.uk",
    ]
    assert updates(ler) == []
    assert len(ler.objects(RECORDS, "records/")) == 2
    assert len(ler.objects(JUNK_BUCKET, "junk/")) == 1
    assert len(ler.objects(RAW, "form/")) == 2  # the raw original is kept per lead (two leads)
    assert len(ler.delivered) > 10


# A portal's required property (HubSpot 2026-09) ---------------------------------------------


def test_a_lead_hubspot_refuses_for_a_required_property_is_kept_counted_and_named(
    ler: Ler, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The portal requires ``jobtitle``, which a web form does not fill: the create answers 400
    (handlers/lead_enricher/crm.py). The lead is not lost: push fails (Lambda's async retries,
    then ler-dlq, which ler-retry re-drives), the claim is let go so the retry can take it,
    ``CrmRejected`` and ``Degraded`` are counted, and the next junk digest names the property
    and what to do. Once the portal is fixed, the same event creates the contact."""
    from handlers.common.degradations import HUBSPOT_REQUIRED_PAGE
    from handlers.lead_enricher.crm import CrmRejected
    from testsupport.metrics import count_metrics, emitted

    count_metrics(monkeypatch, "ler-push")
    ler.crm.required = {"jobtitle"}
    ler.provider.profiles["acme-widgets.co.uk"] = ACME
    lead_id_of(ler.post(JANE))
    capsys.readouterr()
    with pytest.raises(CrmRejected):
        ler.pump()
    [clean] = [e for e in ler.delivered if e["detail-type"] == "le.clean"]
    assert creates(ler) == []
    counted = [(name, dims) for name, _, dims in emitted(capsys.readouterr().out)]
    assert ("CrmRejected", {"service": "ler", "function": "ler-push"}) in counted
    assert ("Degraded", {"service": "ler"}) in counted
    note = ler.clients["dynamodb"].Table(CACHE).get_item(
        Key={"domain": "degraded#CrmRejected#ler-push"}
    )["Item"]
    assert (note["calls"], note["detail"]) == (1, "jobtitle")

    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).date()
    digest.handler({"day": tomorrow.isoformat()}, context())
    fix, mail = owner_and_deployer(ler)
    assert "running degraded" in fix.subject
    assert "HubSpot required property (jobtitle) in ler-push: 1 time since" in fix.body
    assert "make the property optional for API writes" in fix.body
    assert HUBSPOT_REQUIRED_PAGE in fix.body
    assert "running on rules" in mail.subject and "waiting to go into HubSpot" in mail.body
    assert HUBSPOT_REQUIRED_PAGE not in mail.body

    # The portal is fixed; the retry (at once: the claim was released) creates the contact.
    ler.crm.required = set()
    ler.deliver(clean)
    [(_, _, properties)] = creates(ler)
    assert properties["email"] == "jane.doe@acme-widgets.co.uk"


# A refused model (a fresh account) -----------------------------------------------------------


def test_a_refused_model_is_named_in_the_next_junk_digest(ler: Ler) -> None:
    """Bedrock refuses ler-normalize's model (model access not granted: Bedrock User Guide,
    "Access Amazon Bedrock foundation models",
    https://docs.aws.amazon.com/bedrock/latest/userguide/model-access.html). The rules decide,
    the lead still reaches the CRM, and the next junk digest says which model, in which
    function, since when, how many calls fell back, and what to do."""
    from handlers.common.degradations import BEDROCK_ACCESS_PAGE
    from handlers.lead_enricher.contract import NormalizeSettings

    ler.bedrock.add_error("AccessDeniedException")
    ler.post({"email": "jane.doe@acme-widgets.co.uk", "name": "Jane Doe - Acme Widgets", "country": "Blighty"})
    ler.pump()
    assert len(ler.bedrock.calls) == 1 and len(creates(ler)) == 1  # the rules decided

    model = NormalizeSettings.from_environ().normalize_model_id
    note = ler.clients["dynamodb"].Table(CACHE).get_item(
        Key={"domain": "degraded#ModelRefused#ler-normalize"}
    )["Item"]
    assert (note["calls"], note["detail"]) == (1, model)

    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).date()
    digest.handler({"day": tomorrow.isoformat()}, context())
    fix, mail = owner_and_deployer(ler)
    assert f"Model refused ({model}) in ler-normalize: 1 time since" in fix.body
    assert "aws bedrock get-foundation-model-availability --model-id" in fix.body
    assert BEDROCK_ACCESS_PAGE in fix.body
    # #40: the owner reads what it changes and who has the fix, nothing to do in AWS.
    assert "sorted by the fixed rules alone today" in mail.body
    assert f"The fix has gone to {os.environ['ALERT_EMAIL']}" in mail.body
    assert "Bedrock" not in mail.body and "console" not in mail.body


def owner_and_deployer(ler: Ler) -> tuple[Any, Any]:
    """The junk digest's two mails when a fallback was taken: the fix to ``alertEmail``, then
    the owner's digest."""
    fix, mail = ler.sent_mail()
    assert fix.destinations["ToAddresses"] == [os.environ["ALERT_EMAIL"]]
    assert mail.destinations["ToAddresses"] == [os.environ["DIGEST_RECIPIENT"]]
    return fix, mail
