"""ls-report: both rules, strict vs lenient, the unattributed share, caching, JSON and CSV."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.common.entry import registry
from handlers.common.function_url import Request
from handlers.source_attributor.attribution import attribute, is_guessed
from handlers.source_attributor.functions import capture, report, stitch
from handlers.source_attributor.records import Enquiry, Touch
from handlers.source_attributor.reporting import ReportApp, ReportCache, ReportQuery, generate
from tests.handlers.ls.conftest import (
    ORIGIN,
    Clock,
    StreamReader,
    arrival,
    beacon,
    enquiry,
    items,
)
from testsupport.ls import InMemoryStore

AUGUST = (dt.date(2026, 8, 1), dt.date(2026, 8, 31))
H1, H2, H3, H5, H9 = ("1" * 64, "2" * 64, "3" * 64, "5" * 64, "9" * 64)
A, B, C, D, E = (f"{letter}" * 20 for letter in "ABCDE")


def at(day: str, hour: int = 12) -> str:
    return f"2026-{day}T{hour:02d}:00:00.000000Z"


def touch(visitor: str, when: str, source: str, medium: str, how: str) -> Touch:
    return Touch(visitor, when, source, medium, "", "", "/", how, 0)  # type: ignore[arg-type]


def hand_fixture() -> InMemoryStore:
    """Five August enquiries, one in July and one in September (see the expected counts)."""
    store = InMemoryStore()
    touches = [
        touch(A, at("08-01"), "google", "organic", "referrer"),
        touch(A, at("08-03"), "direct", "direct", "none"),
        touch(A, at("08-05"), "google", "asked", "none"),
        touch(B, at("08-02"), "direct", "direct", "none"),
        touch(C, at("08-04"), "facebook", "cpc", "utm"),
        touch(C, at("08-07"), "newsletter", "referral", "utm"),
        touch(C, at("08-08"), "podcast_x", "asked", "none"),
        touch(D, at("08-09"), "direct", "direct", "none"),
        touch(D, at("08-11"), "bing", "cpc", "utm"),  # after D's enquiry: not in its path
    ]
    for t in touches:
        store.put_touch(t)
    enquiries = [
        ("e1", at("08-05"), A, H1), ("e2", at("08-06"), B, H2), ("e3", at("08-08"), C, H3),
        ("e4", at("08-10"), D, H1), ("e5", at("08-12"), E, H5),
        ("e0", at("07-31", 23), A, H1), ("e6", at("09-01", 0), B, H2),
    ]
    for eid, when, visitor, person in enquiries:
        store.put_enquiry(Enquiry(when[:7], eid, when, visitor, person, "", "/contact"), None)
    for person, visitor, eid, when in ((H1, A, "e1", at("08-05")), (H1, D, "e4", at("08-10"))):
        store.link(person, visitor, "email", when, eid)
    store.link(H9, B, "email", at("08-01"), "unrelated")
    return store


def counts(document: dict[str, Any], rule: str) -> tuple[dict[str, int], int, float]:
    section = document["rules"][rule]
    sources = {row["source"]: row["enquiries"] for row in section["sources"]}
    return sources, section["unattributed"]["enquiries"], section["unattributed"]["share"]


def run_report(store: InMemoryStore, mode: str, include_asked: bool = False) -> dict[str, Any]:
    query = ReportQuery(*AUGUST, mode, include_asked, "json")  # type: ignore[arg-type]
    return generate(store, query).to_json()


def test_strict_report_on_the_hand_computed_fixture() -> None:
    document = run_report(hand_fixture(), "strict")
    assert document["enquiries"] == 5
    assert counts(document, "first_touch") == ({"google": 2, "facebook": 1}, 2, 0.4)
    assert counts(document, "last_non_direct") == ({"google": 2, "newsletter": 1}, 2, 0.4)


def test_lenient_report_on_the_hand_computed_fixture() -> None:
    document = run_report(hand_fixture(), "lenient")
    assert document["include_asked"] is True
    assert counts(document, "first_touch") == (
        {"google": 2, "direct": 1, "facebook": 1}, 1, 0.2,
    )
    assert counts(document, "last_non_direct") == ({"google": 2, "podcast_x": 1}, 2, 0.4)


def test_strict_with_asked_answers_when_asked_for() -> None:
    document = run_report(hand_fixture(), "strict", include_asked=True)
    assert counts(document, "first_touch") == ({"google": 2, "facebook": 1}, 2, 0.4)
    assert counts(document, "last_non_direct") == ({"google": 2, "podcast_x": 1}, 2, 0.4)


def test_the_unattributed_share_is_present_when_it_is_zero_and_when_nothing_enquired() -> None:
    store = InMemoryStore()
    store.put_touch(touch(A, at("08-01"), "google", "organic", "referrer"))
    store.put_enquiry(Enquiry("2026-08", "e1", at("08-02"), A, H1, "", "/"), None)
    document = run_report(store, "strict")
    assert counts(document, "first_touch") == ({"google": 1}, 0, 0.0)
    empty = run_report(InMemoryStore(), "strict")
    assert empty["enquiries"] == 0
    assert counts(empty, "last_non_direct") == ({}, 0, 0.0)


def test_csv_has_the_same_numbers_and_always_the_unattributed_rows() -> None:
    query = ReportQuery(*AUGUST, "strict", False, "csv")
    rows = list(csv.DictReader(io.StringIO(generate(hand_fixture(), query).to_csv())))
    assert {(r["rule"], r["source"]): (int(r["enquiries"]), r["share"]) for r in rows} == {
        ("first_touch", "google"): (2, "0.4000"),
        ("first_touch", "facebook"): (1, "0.2000"),
        ("first_touch", "(unattributed)"): (2, "0.4000"),
        ("last_non_direct", "google"): (2, "0.4000"),
        ("last_non_direct", "newsletter"): (1, "0.2000"),
        ("last_non_direct", "(unattributed)"): (2, "0.4000"),
    }


MEDIUM_HOW = st.sampled_from(
    [("organic", "referrer"), ("cpc", "utm"), ("referral", "referrer"), ("referral", "utm"),
     ("direct", "none"), ("asked", "none"), ("organic", "none")]
)


@st.composite
def journeys(draw: st.DrawFn) -> tuple[list[Enquiry], list[Touch]]:
    visitors = [f"visitor-{n:012d}" for n in range(draw(st.integers(1, 6)))]
    touches = []
    for n in range(draw(st.integers(0, 30))):
        medium, how = draw(MEDIUM_HOW)
        source = draw(st.sampled_from(["google", "facebook", "direct", "podcast_x", "bing"]))
        when = f"2026-08-{draw(st.integers(1, 28)):02d}T00:00:{n:02d}.000000Z"
        touches.append(touch(draw(st.sampled_from(visitors)), when, source, medium, how))
    enquiries = [
        Enquiry("2026-08", f"e{n}", f"2026-08-{draw(st.integers(1, 28)):02d}T12:00:00.000000Z",
                draw(st.sampled_from(visitors)), H1, "", "/")
        for n in range(draw(st.integers(0, 6)))
    ]
    return enquiries, touches


@settings(max_examples=200, deadline=None)
@given(journeys())
def test_strict_and_lenient_differ_exactly_by_the_guessed_touches(
    journey: tuple[list[Enquiry], list[Touch]],
) -> None:
    enquiries, touches = journey
    observed = [t for t in touches if not is_guessed(t)]
    strict = attribute(enquiries, lambda e: touches, start=AUGUST[0], end=AUGUST[1],
                       mode="strict")
    lenient_without_guesses = attribute(enquiries, lambda e: observed, start=AUGUST[0],
                                        end=AUGUST[1], mode="lenient")
    assert strict.rules == lenient_without_guesses.rules
    if len(observed) == len(touches):
        lenient = attribute(enquiries, lambda e: touches, start=AUGUST[0], end=AUGUST[1],
                            mode="lenient")
        assert lenient.rules == strict.rules


class CountingStore(InMemoryStore):
    """Counts the queries a report makes."""

    def __init__(self, inner: InMemoryStore) -> None:
        self.__dict__.update(inner.__dict__)
        self.calls = 0

    def enquiries(self, month: str) -> list[Enquiry]:
        self.calls += 1
        return super().enquiries(month)


def get(params: dict[str, str], method: str = "GET") -> Request:
    return Request.read({
        "version": "2.0",
        "queryStringParameters": params,
        "requestContext": {"requestId": "r", "http": {"method": method}},
    })


def test_reports_are_cached_for_a_day_by_range_mode_and_format() -> None:
    store = CountingStore(hand_fixture())
    ticks = {"now": 1000.0}
    app = ReportApp(store, cache_seconds=86400, clock=lambda: dt.datetime(2026, 9, 1, tzinfo=dt.UTC))
    app.cache = ReportCache(86400, clock=lambda: ticks["now"])
    august = {"from": "2026-08-01", "to": "2026-08-31"}
    first = app(get(august))
    assert first["headers"]["x-report-cache"] == "miss"
    assert first["headers"]["cache-control"] == "private, max-age=86400"
    assert first["headers"]["content-type"].startswith("application/json")
    calls = store.calls
    ticks["now"] += 3600
    again = app(get(august))
    assert again["headers"]["x-report-cache"] == "hit"
    assert again["body"] == first["body"]
    assert again["headers"]["cache-control"] == "private, max-age=82800"
    assert store.calls == calls
    as_csv = app(get({**august, "format": "csv"}))
    assert as_csv["headers"]["x-report-cache"] == "miss"
    assert as_csv["headers"]["content-type"].startswith("text/csv")
    assert app(get({**august, "mode": "lenient"}))["headers"]["x-report-cache"] == "miss"
    ticks["now"] += 86400
    assert app(get(august))["headers"]["x-report-cache"] == "miss"


def test_no_caching_when_configured_off() -> None:
    app = ReportApp(hand_fixture(), cache_seconds=0)
    first = app(get({}))
    assert first["headers"]["cache-control"] == "no-store"
    assert app(get({}))["headers"]["x-report-cache"] == "miss"


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"from": "2026-13-01"}, 400),
        ({"from": "2026-08-31", "to": "2026-08-01"}, 400),
        ({"from": "2025-01-01", "to": "2026-08-01"}, 400),
        ({"mode": "creative"}, 400),
        ({"format": "xml"}, 400),
        ({"include_asked": "perhaps"}, 400),
    ],
)
def test_bad_parameters_are_400(params: dict[str, str], status: int) -> None:
    response = ReportApp(hand_fixture(), cache_seconds=86400)(get(params))
    assert response["statusCode"] == status
    assert "error" in json.loads(response["body"])


def test_only_get_is_served() -> None:
    assert ReportApp(hand_fixture(), cache_seconds=86400)(get({}, method="POST"))["statusCode"] == 405


def test_default_range_is_the_last_30_days() -> None:
    app = ReportApp(hand_fixture(), cache_seconds=86400, clock=lambda: dt.datetime(2026, 8, 30, tzinfo=dt.UTC))
    document = json.loads(app(get({}))["body"])
    assert document["range"] == {"from": "2026-08-01", "to": "2026-08-30"}
    assert document["enquiries"] == 5


# End to end over moto: capture -> stream -> stitch -> report ---------------------------------

PHONE = "phone-aaaaaaaaaaaaaaaaaaaa"
LAPTOP = "laptop-bbbbbbbbbbbbbbbbbbb"


def report_json(params: dict[str, str]) -> dict[str, Any]:
    response = report.handler(get(params), None)
    assert response["statusCode"] == 200
    return dict(json.loads(response["body"]))


@pytest.mark.usefixtures("apps")
def test_attribution_improves_retroactively_and_nothing_is_written_back(
    clock: Clock, read_stream: StreamReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    def send(body: dict[str, Any]) -> None:
        assert capture.handler(beacon(body), None)["statusCode"] == 200

    send(arrival(f"{ORIGIN}/?utm_source=Google&utm_medium=cpc", visitor_id=PHONE))
    clock.advance(days=2)
    send(arrival(f"{ORIGIN}/pricing", visitor_id=LAPTOP))
    clock.advance(minutes=5)
    send(enquiry("ada@example.com", visitor_id=LAPTOP, submission_id="sub-laptop-1"))
    run = {"from": "2026-08-01", "to": "2026-08-31"}
    stitch.handler(read_stream(), None)
    before = report_json(run)
    assert counts(before, "first_touch") == ({}, 1, 1.0)

    clock.advance(days=1)
    send(enquiry("Ada@example.com", visitor_id=PHONE, submission_id="sub-phone-1"))
    stitch.handler(read_stream(), None)
    enquiries_before = items("dev-ls-enquiries")
    registry.clear(report)  # a new container: no cache
    after = report_json(run)
    assert after["enquiries"] == 2
    assert counts(after, "first_touch") == ({"google": 2}, 0, 0.0)
    assert counts(after, "last_non_direct") == ({"google": 2}, 0, 0.0)
    assert items("dev-ls-enquiries") == enquiries_before
    assert all(set(row) == {"month", "enquiry_id", "at", "visitor_id", "email_hash",
                            "heard_about", "landing", "ttl"} for row in enquiries_before)


def test_threaded_reads_give_the_same_report() -> None:
    query = ReportQuery(*AUGUST, "lenient", True, "json")
    store = hand_fixture()
    assert generate(store, query, workers=4) == generate(store, query, workers=1)


def load_into_dynamo(memory: InMemoryStore) -> None:
    """The in-memory rows, written to the dev stack's moto tables."""
    from handlers.common.aws_clients import table

    with table("dev-ls-touches").batch_writer() as batch:
        for rows in memory.touch_rows.values():
            for t in rows.values():
                batch.put_item(Item=t.item())
    with table("dev-ls-enquiries").batch_writer() as batch:
        for month in memory.enquiry_rows.values():
            for e in month.values():
                batch.put_item(Item=e.item())
    with table("dev-ls-identities").batch_writer() as batch:
        for identities in memory.identity_table.values():
            for row in identities.values():
                batch.put_item(Item=row.item())


@pytest.mark.usefixtures("apps")
def test_the_dynamodb_reader_with_threads_matches_memory(clock: Clock) -> None:
    from handlers.source_attributor.store import DynamoStore

    memory = hand_fixture()
    load_into_dynamo(memory)
    dynamo = DynamoStore("dev-ls-touches", "dev-ls-identities", "dev-ls-enquiries")
    for mode in ("strict", "lenient"):
        query = ReportQuery(*AUGUST, mode, False, "json")
        assert generate(dynamo, query, workers=4) == generate(memory, query)


def test_the_owner_report_ranks_the_unattributed_share_as_a_source_in_bold_and_in_words() -> None:
    from handlers.source_attributor import owner_report
    from handlers.source_attributor.attribution import RuleResult
    from testsupport.gallery import ls_report

    report = ls_report()
    mail = owner_report.mail(report)
    first = mail.text.split("Where enquiries first came from\n")[1].splitlines()
    assert first[:2] == ["  Not known (unattributed): 15 (36%)", "  google: 14 (33%)"]
    assert mail.subject.endswith("42 enquiries, 36% not known")
    assert "<strong>Not known (unattributed)</strong>" in mail.html and "<img" not in mail.html
    none_unknown = type(report)(report.start, report.end, "strict", False, 3,
                                {"first_touch": RuleResult({"google": 3}, 0)})
    assert "  Not known (unattributed): 0 (0%)" in owner_report.mail(none_unknown).text


def test_the_schedule_mails_last_weeks_report_to_the_owner(apps: Clock) -> None:
    """The schedule's ``{"job": "ls-report"}``: the seven whole days before the run (Monday
    2026-08-11 09:00 UTC: 4 to 10 August), strict mode, through SES to reportRecipient."""
    from moto.core import DEFAULT_ACCOUNT_ID  # type: ignore[attr-defined]
    from moto.ses.models import ses_backends

    load_into_dynamo(hand_fixture())
    answer = report.handler({"job": "ls-report"}, None)
    assert answer["from"] == "2026-08-04" and answer["to"] == "2026-08-10"
    assert answer["enquiries"] == 4  # e1, e2, e3, e4; e5 (12 August) is next week's
    [sent] = ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages
    assert sent.source == "crm-bot@example.com" and sent.destinations["ToAddresses"] == [
        "ops@example.com"
    ]
    assert "4 enquiries" in sent.subject and "not known" in sent.subject
    # moto keeps one body part (the HTML when there is one): the renderer's own test covers
    # the plain-text part.
    assert "<strong>Not known (unattributed)</strong>" in sent.body


@pytest.mark.usefixtures("apps")
def test_a_report_request_sends_no_mail() -> None:
    from moto.core import DEFAULT_ACCOUNT_ID  # type: ignore[attr-defined]
    from moto.ses.models import ses_backends

    assert report.handler(get({}), None)["statusCode"] == 200
    assert not ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages
