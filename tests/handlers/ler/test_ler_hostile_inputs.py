"""ler-intake against inputs that used to crash it or lose leads: deep multipart mail, a
malformed Reply-To, CSV uploads of any size (chunked across invocations, resumed after a
crash), a row with an unclosed quote or a 128 KiB field, and formula-like values."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.lead_enricher.crm_fields import crm_properties, spreadsheet_safe
from handlers.lead_enricher.functions import intake
from tests.handlers.ler.conftest import JUNK_BUCKET, RAW, Ler, context


def nested_mail(levels: int) -> bytes:
    body = "Content-Type: text/plain\r\n\r\nPlease call me about tiles.\r\n"
    for level in range(levels):
        b = f"b{level}"
        body = f'Content-Type: multipart/mixed; boundary="{b}"\r\n\r\n--{b}\r\n{body}\r\n--{b}--\r\n'
    return ("From: Tom <tom@thames-tiles.co.uk>\r\nSubject: Tiles\r\nMIME-Version: 1.0\r\n" + body).encode()


class RecordingQueue:
    """ler-intake-queue as a list: moto's SendMessageBatch slows with the queue's depth
    (about 75 ms a batch here), which would make a 6,000-row upload take minutes."""

    def __init__(self) -> None:
        self.lead_ids: list[str] = []

    def send(self, leads: Any) -> int:
        batch = [lead.lead_id for lead in leads]
        self.lead_ids.extend(batch)
        return len(batch)


def test_a_mail_nested_1200_levels_deep_is_a_junk_record_saying_why(ler: Ler) -> None:
    ler.put_raw("inbound/deep-1", nested_mail(1200))
    [counts] = ler.deliver_s3()
    assert counts == {"queued": 0, "junk": 1, "ignored": 0}
    [entry] = ler.objects(JUNK_BUCKET, "junk/").values()
    assert entry["reason"] == "unreadable_mail: multipart nested too deep" and entry["lane"] == "mail"
    assert entry["lead"]["raw"]["key"] == "inbound/deep-1"  # enough to find the original


def test_a_malformed_reply_to_falls_back_to_a_valid_from(ler: Ler) -> None:
    mail = (b"From: Tom Reed <tom@thames-tiles.co.uk>\r\nReply-To: <<not an address>>@@\r\n"
            b"Subject: Quote please\r\n\r\nPhone: 020 7946 0000\r\nI need 40 m2 of tiles.\r\n")
    ler.put_raw("inbound/reply-1", mail)
    [counts] = ler.deliver_s3()
    assert counts["queued"] == 1
    [body] = ler.queued()
    assert json.loads(body)["fields"]["email"] == "tom@thames-tiles.co.uk"


def csv_of(rows: int, *, extra: str = "") -> bytes:
    lines = ["email,first_name,company"]
    lines += [f"lead{n}@acme-widgets.co.uk,Lead{n},Acme {n}" for n in range(1, rows + 1)]
    return ("\n".join(lines) + "\n" + extra).encode()


def short_context(ms: int) -> Any:
    base = context()
    return SimpleNamespace(**{**vars(base), "get_remaining_time_in_millis": lambda: ms})


def test_an_upload_of_any_size_is_read_completely_across_invocations(ler: Ler) -> None:
    ler.put_raw("upload/big.csv", csv_of(6_000))
    [notification] = ler.s3_notifications()
    continuations: list[Any] = []
    service = registry.service(intake)
    service.invoke_self = continuations.append
    service.queue = queue = RecordingQueue()
    intake.handler(notification, short_context(1_000))  # little time left: one chunk per run
    runs = 1
    while continuations:
        intake.handler(continuations.pop(), short_context(1_000))
        runs += 1
    assert runs == 13  # 12 chunks of 500 rows, then a run that finds the end and says "done"
    assert len(queue.lead_ids) == len(set(queue.lead_ids)) == 6_000  # every row, past the old cap
    report = ler.objects(RAW, "reports/")["reports/upload/big.csv.json"]
    assert (report["state"], report["rows"], report["leads"], report["junk"]) == ("done", 6_000, 6_000, 0)
    intake.handler(notification, context())  # a late duplicate S3 event: nothing again
    assert len(queue.lead_ids) == 6_000


class Crash(BaseException):
    """The invocation dies (timeout) here."""


def test_an_upload_interrupted_mid_file_resumes_without_losing_a_row(ler: Ler, monkeypatch: pytest.MonkeyPatch) -> None:
    ler.put_raw("upload/crash.csv", csv_of(1_700))
    [notification] = ler.s3_notifications()
    service = registry.service(intake)
    queue = RecordingQueue()
    service.queue = queue
    real = queue.send
    calls = {"n": 0}

    def dying_send(leads: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 3:  # the third chunk's enqueue: the invocation times out
            raise Crash("timeout")
        return real(leads)

    monkeypatch.setattr(queue, "send", dying_send)
    with pytest.raises(Crash):
        intake.handler(notification, context())
    report = ler.objects(RAW, "reports/")["reports/upload/crash.csv.json"]
    assert report["cursor"] == 1_000 and report["state"] == "reading"
    intake.handler(notification, context())  # Lambda's retry of the S3 event resumes at 1,000
    ids = queue.lead_ids
    assert len(ids) == 1_700 and len(set(ids)) == 1_700  # no row lost, none queued twice


def test_a_malformed_row_is_isolated_and_an_oversized_field_fails_only_its_row(ler: Ler) -> None:
    body = (
        "email,first_name,company\n"
        "ann@acme-widgets.co.uk,Ann,Acme\n"
        '"bob@acme-widgets.co.uk,Bob,Acme\n'  # unclosed quote
        "cat@acme-widgets.co.uk,Cat,Acme\n"
        "dan@acme-widgets.co.uk,Dan,Acme\n"
        f"eve@acme-widgets.co.uk,{'E' * 140_000},Acme\n"  # a field over 128 KiB
        '"fay@acme-widgets.co.uk","Fay","12 High St\nLondon"\n'  # a legit two-line field
    ).encode() + b"".join(f"g{n}@acme-widgets.co.uk,G{n},Acme\n".encode() for n in range(50))
    ler.put_raw("upload/mixed.csv", body)
    ler.deliver_s3()
    queued = [json.loads(b)["fields"] for b in ler.queued()]
    names = sorted(q.get("first_name", "") for q in queued)
    assert len(queued) == 54 and {"Ann", "Cat", "Dan", "Fay"} <= set(names)
    assert not [q for q in queued if "bob@" in json.dumps(q) or "\n" in q.get("first_name", "")]
    junk = {e["lead"]["raw"]["row"]: e["reason"] for e in ler.objects(JUNK_BUCKET, "junk/").values()}
    assert junk == {"2": "malformed_row: unclosed quote (row 2, line 3)",
                    "5": "field_too_large (row 5, line 6)"}
    report = ler.objects(RAW, "reports/")["reports/upload/mixed.csv.json"]
    assert [(r["row"], r["reason"]) for r in report["refused"]] == [
        (2, "malformed_row: unclosed quote"), (5, "field_too_large")]
    assert report["rows"] == 56 and report["leads"] + report["junk"] == 56


@pytest.mark.parametrize("value", ["=cmd|' /C calc'!A0", "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx"])
def test_values_a_spreadsheet_would_run_are_neutralised_before_the_crm(value: str) -> None:
    from tests.handlers.ler.test_ler_push import clean_lead

    properties = crm_properties(clean_lead(first_name=value, company=value))
    assert properties["firstname"] == f"'{value}" and properties["company"] == f"'{value}"
    assert properties["phone"] == "+447400123456"  # E.164 kept as typed
    assert spreadsheet_safe("Jane") == "Jane"


def test_two_runs_of_one_upload_at_once_never_lose_rows_and_the_late_one_stops(ler: Ler) -> None:
    """A continuation and a retried S3 event both resume from one report: the report's
    conditional write (If-Match on the ETag read) lets one go on; the other stops."""
    ler.put_raw("upload/twice.csv", csv_of(1_200))
    [notification] = ler.s3_notifications()
    service = registry.service(intake)
    queue = RecordingQueue()
    service.queue = queue
    real = queue.send
    state = {"sends": 0}

    def send(leads: Any) -> int:
        state["sends"] += 1
        if state["sends"] == 1:  # while run A is queueing its first chunk, run B does it all
            intake.handler(notification, context())
        return real(leads)

    queue.send = send  # type: ignore[method-assign]
    intake.handler(notification, context())  # run A: its report write loses, it stops
    report = ler.objects(RAW, "reports/")["reports/upload/twice.csv.json"]
    assert report["state"] == "done" and report["rows"] == 1_200
    assert len(set(queue.lead_ids)) == 1_200  # every row
    assert len(queue.lead_ids) == 1_700  # B's 1,200 and A's first chunk of 500 again (push absorbs)
