"""ler-intake: authenticity first, 4xx without side effects, the pre-screen, the S3 lanes."""

from __future__ import annotations

import base64
import datetime as dt
import json
import time
from email.message import EmailMessage
from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.common.webhook_signatures import sign_timestamped
from handlers.lead_enricher.functions import intake
from handlers.lead_enricher.inputs import from_mapping, from_mime
from handlers.lead_enricher.prescreen import prescreen
from handlers.lead_enricher.uploads import from_csv
from tests.handlers.ler.conftest import INTAKE_SECRET, JUNK_BUCKET, RAW, Ler, context, url_event

LEAD = {"email": "ada@analytical-engines.co.uk", "name": "Ada Lovelace"}
RENDER_NOW = 1764324001.0
"""Intake's clock in the timing tests: the forms below were rendered 0.8 s and 2.5 s before."""


def nothing_changed(ler: Ler) -> bool:
    return not ler.objects(RAW) and not ler.objects(JUNK_BUCKET) and not ler.queued()


def error_of(response: dict[str, Any]) -> tuple[int, str]:
    return response["statusCode"], json.loads(response["body"])["error"]["code"]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, (401, "unauthorized")),
        ({"x-ler-intake-secret": "not-the-secret"}, (401, "unauthorized")),
        ({"x-ler-signature": "t=1,v1=00"}, (401, "unauthorized")),
    ],
    ids=["no secret", "wrong secret", "bad signature"],
)
def test_requests_without_the_secret_are_refused_and_change_nothing(
    ler: Ler, headers: dict[str, str], expected: tuple[int, str]
) -> None:
    response = intake.handler(url_event(json.dumps(LEAD), headers=headers), context())
    assert error_of(response) == expected
    assert nothing_changed(ler)


def test_a_check_mark_alone_skips_no_secret_check(ler: Ler) -> None:
    event = url_event(json.dumps(LEAD), headers={"x-crm-check": "1", "x-ler-intake-secret": "not-the-secret"})
    assert error_of(intake.handler(event, context())) == (401, "unauthorized")
    assert nothing_changed(ler)


def test_a_check_lead_is_stored_and_queued_marked_and_names_what_it_wrote(ler: Ler) -> None:
    """make verify's lead: the real path, its answer tells verify what to remove."""
    event = url_event(json.dumps(LEAD), headers={"x-crm-check": "1", "x-ler-intake-secret": INTAKE_SECRET})
    response = intake.handler(event, context())
    assert response["statusCode"] == 202
    written = json.loads(response["body"])["check"]
    assert (written["bucket"], written["queued"], written["junk"]) == (RAW, 1, 0)
    assert list(ler.objects(RAW, "form/")) == [written["raw_key"]]
    [queued] = ler.queued()
    assert json.loads(queued)["signals"]["check"] is True
    assert json.loads(queued)["v"] == 1  # its format version (handlers.common.formats)


def test_a_timestamped_signature_is_accepted_and_a_stale_one_refused(ler: Ler) -> None:
    body = json.dumps(LEAD)
    fresh = sign_timestamped(body.encode(), INTAKE_SECRET, int(time.time()))
    assert (
        intake.handler(url_event(body, headers={"x-ler-signature": fresh}), context())["statusCode"]
        == 202
    )
    stale = sign_timestamped(body.encode(), INTAKE_SECRET, int(time.time()) - 3600)
    response = intake.handler(url_event(body, headers={"x-ler-signature": stale}), context())
    assert error_of(response) == (401, "unauthorized")
    assert len(ler.queued()) == 1


@pytest.mark.parametrize(
    ("event_changes", "expected"),
    [
        ({"method": "GET"}, (405, "method_not_allowed")),
        ({"body": "{not json"}, (400, "invalid_json")),
        ({"body": "[1, 2]"}, (400, "invalid_json")),
        ({"body": json.dumps({"message": "hi"})}, (400, "no_contact")),
        ({"content_type": "text/plain"}, (415, "unsupported_media_type")),
        (
            {"body": json.dumps({"email": "a@b.co", "message": "x" * 70000})},
            (413, "payload_too_large"),
        ),
    ],
    ids=["GET", "not json", "not an object", "no contact", "text/plain", "too large"],
)
def test_bad_input_is_a_4xx_json_error_and_changes_nothing(
    ler: Ler, event_changes: dict[str, str], expected: tuple[int, str]
) -> None:
    event = url_event(
        event_changes.get("body", json.dumps(LEAD)),
        headers={
            "x-ler-intake-secret": INTAKE_SECRET,
            "content-type": event_changes.get("content_type", "application/json"),
        },
        method=event_changes.get("method", "POST"),
    )
    response = intake.handler(event, context())
    assert error_of(response) == expected
    assert response["headers"]["content-type"].startswith("application/json")
    assert nothing_changed(ler)


def test_a_url_encoded_form_is_accepted_and_its_raw_body_kept(ler: Ler) -> None:
    body = "Email=ada%40analytical-engines.co.uk&Your+Name=Ada+Lovelace&comments=Hello"
    event = url_event(
        base64.b64encode(body.encode()).decode(),
        headers={
            "x-ler-intake-secret": INTAKE_SECRET,
            "content-type": "application/x-www-form-urlencoded",
        },
    )
    event["isBase64Encoded"] = True
    assert intake.handler(event, context())["statusCode"] == 202
    [raw] = ler.objects(RAW, "form/").values()
    assert raw == {"raw": body.encode()}
    [queued] = ler.queued()
    lead = json.loads(queued)
    assert lead["fields"] == {"email": "ada@analytical-engines.co.uk", "name": "Ada Lovelace"}
    assert lead["message"] == "Hello" and lead["lane"] == "form"
    assert lead["raw"]["key"].startswith("form/") and lead["raw"]["version_id"]


def test_iam_mode_trusts_the_signed_url_and_reads_no_secret(
    ler: Ler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_AUTH", "iam")
    monkeypatch.delenv("INTAKE_SECRET_ID")
    monkeypatch.setattr(
        "handlers.lead_enricher.lanes.get_secret", lambda _: pytest.fail("no secret in iam mode")
    )
    assert ler.post(LEAD, secret=None)["statusCode"] == 202
    assert len(ler.queued()) == 1


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({**LEAD, "_gotcha": "http://spam.example"}, "honeypot"),
        ({**LEAD, "email": "ada@mailinator.com"}, "disposable_domain"),
        ({**LEAD, "email": "ada@eu.yopmail.com"}, "disposable_domain"),
        ({**LEAD, "_rendered_at": "1764324000200"}, "submitted_too_fast"),
        ({**LEAD, "_rendered_at": "1764323998.5"}, "submitted_too_fast"),
    ],
    ids=["honeypot", "disposable", "disposable subdomain", "too fast (ms)", "too fast (s)"],
)
def test_obvious_junk_goes_straight_to_ler_junk_with_its_reason(
    ler: Ler, payload: dict[str, str], reason: str
) -> None:
    registry.override(clock=lambda: dt.datetime.fromtimestamp(RENDER_NOW, dt.UTC))
    response = ler.post(payload)
    assert response["statusCode"] == 202  # a bot learns nothing from the answer
    assert ler.queued() == []
    [entry] = ler.objects(JUNK_BUCKET, "junk/").values()
    assert (entry["reason"], entry["stage"], entry["lane"]) == (reason, "intake", "form")
    assert entry["lead"]["fields"]["email"] == payload["email"]


def test_a_form_rendered_long_enough_ago_passes(ler: Ler) -> None:
    registry.override(clock=lambda: dt.datetime.fromtimestamp(RENDER_NOW, dt.UTC))
    ler.post({**LEAD, "_rendered_at": str(int(RENDER_NOW) - 40)})
    assert len(ler.queued()) == 1 and not ler.objects(JUNK_BUCKET)


def message(**headers: str) -> bytes:
    mail = EmailMessage()
    for name, value in headers.items():
        mail[name.replace("_", "-")] = value
    mail.set_content("Hi, please call me.\nPhone: 0161 496 0000\n")
    return mail.as_bytes()


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"X_SES_Spam_Verdict": "FAIL"}, "ses_spam_verdict"),
        ({"X_SES_Virus_Verdict": "FAIL"}, "ses_virus_verdict"),
        ({"Auto_Submitted": "auto-replied"}, "auto_reply"),
    ],
)
def test_mail_that_ses_failed_or_no_person_wrote_is_junk(
    ler: Ler, headers: dict[str, str], reason: str
) -> None:
    ler.put_raw(
        "inbound/msg-1", message(From="Tom <tom@thames-tiles.co.uk>", Subject="Hi", **headers)
    )
    [counts] = ler.deliver_s3()
    assert counts == {"queued": 0, "junk": 1, "ignored": 0}
    [entry] = ler.objects(JUNK_BUCKET, "junk/").values()
    assert (entry["reason"], entry["lane"]) == (reason, "mail")


def test_a_redelivered_s3_event_is_the_same_lead(ler: Ler) -> None:
    ler.put_raw(
        "upload/a.csv",
        b"email,name\nada@analytical-engines.co.uk,Ada\ngrace@cobol.example.io,Grace\n",
    )
    [notification] = ler.s3_notifications()
    intake.handler(notification, context())
    intake.handler(notification, context())
    ids = [json.loads(body)["lead_id"] for body in ler.queued()]
    # The upload's report says it was read to the end: the redelivery queues nothing again.
    assert len(ids) == 2 and len(set(ids)) == 2


def test_parsers_map_field_names_and_keep_signals() -> None:
    raw = from_mapping(
        {
            "fields": {"E-mail": "a@b.co", "Telephone": "0161 496 0000"},
            "Full Name": "Ada",
            "hp": "",
            "www": "x",
        }
    )
    assert raw.fields == {"email": "a@b.co", "phone": "0161 496 0000", "name": "Ada"}
    assert raw.signals["honeypot"] == ""
    mail = from_mime(
        message(From="Tom <tom@thames-tiles.co.uk>", Subject="Quote", List_Unsubscribe="<x>")
    )
    assert mail.fields == {
        "email": "tom@thames-tiles.co.uk",
        "name": "Tom",
        "phone": "0161 496 0000",
    }
    assert mail.signals["bulk"] is True and mail.message.startswith("Quote")
    rows = list(from_csv(b"\xef\xbb\xbfemail\tname\nx@y.co\tX\n"))  # BOM, tab-separated
    assert [(n, r.fields) for n, r in rows] == [(1, {"email": "x@y.co", "name": "X"})]
    latin = list(from_csv("email,name\nj@y.co,Jos\xe9\n".encode("latin-1")))
    assert latin[0][1].fields["name"] == "José"


def test_prescreen_passes_what_is_merely_suspicious() -> None:
    raw = from_mapping({"email": "bob@gmail.com", "message": "http://a http://b http://c"})
    assert prescreen(raw, now=time.time(), min_submit_seconds=3) is None


def test_the_ses_setup_notification_is_no_lead(ler: Ler) -> None:
    ler.put_raw("inbound/AMAZON_SES_SETUP_NOTIFICATION", b"Amazon SES setup notification")
    [counts] = ler.deliver_s3()
    assert counts == {"queued": 0, "junk": 0, "ignored": 1}
    assert ler.objects(JUNK_BUCKET, "junk/") == {}
