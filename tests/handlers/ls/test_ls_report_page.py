"""ls-report-page: the weekly mail's signed link opens that week's report as a page; a link
that is not ours, cut, changed, expired or used on another path is refused before any read.

The mail and the page go through the real handlers on the dev stack's moto world (tables,
secrets and environment from the graph); the refusals also run over a store that fails on any
read, so "checked before anything is read" is a property of the code, not of an empty table.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from handlers.common.aws_clients import table
from handlers.common.function_url import Request
from handlers.common.link_tokens import Keyring, issue_token
from handlers.source_attributor import report_link
from handlers.source_attributor.functions import report, report_page
from handlers.source_attributor.week_page import WeekPage
from tests.handlers.ls.conftest import LINK_KEYRING, Clock, items
from tests.handlers.ls.test_ls_report import hand_fixture, load_into_dynamo

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
PAGE_URL = "https://dev-ls-report-page.lambda-url.us-east-1.on.aws"
KEYS = Keyring.from_secret_string(LINK_KEYRING)


def request(url: str, *, accept: str = BROWSER, method: str = "GET") -> dict[str, Any]:
    """The Function URL (payload 2.0) event of a browser opening ``url``."""
    parts = urlsplit(url)
    return {
        "version": "2.0",
        "rawPath": parts.path or "/",
        "rawQueryString": parts.query,
        "queryStringParameters": {k: v[-1] for k, v in parse_qs(parts.query).items()},
        "headers": {"accept": accept},
        "requestContext": {"requestId": "req-1", "http": {"method": method}},
        "isBase64Encoded": False,
    }


def mailed_link() -> tuple[str, str]:
    """Run the weekly schedule; the link in the mail it sent, and the mail's HTML."""
    from moto.core import DEFAULT_ACCOUNT_ID  # type: ignore[attr-defined]
    from moto.ses.models import ses_backends

    load_into_dynamo(hand_fixture())
    report.handler({"job": "ls-report"}, None)
    [sent] = ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages
    [link] = re.findall(r"href='([^']+)'", sent.body)
    return link.replace("&amp;", "&"), sent.body


def test_the_mails_link_opens_the_same_weeks_report_as_a_page(apps: Clock) -> None:
    link, mail_html = mailed_link()
    assert link.startswith(f"{PAGE_URL}/report?t=v1.k1.")  # the page function's own URL
    apps.advance(days=3)  # opened on Thursday
    page = report_page.handler(request(link), None)
    assert page["statusCode"] == 200
    assert page["headers"]["content-type"].startswith("text/html")
    assert page["headers"]["cache-control"] == "no-store"
    html = page["body"]
    # The mail's week (4 to 10 August) and the mail's figures, by the mail's renderer.
    assert "<h1>Lead sources Tue 4 Aug 2026 to Mon 10 Aug 2026</h1>" in html
    assert "4 enquiries from Tue 4 Aug 2026 to Mon 10 Aug 2026" in html
    assert "<strong>Not known (unattributed)</strong>" in html
    for figure in re.findall(r">(\d+ \(\d+%\))<", mail_html):
        assert figure in html
    assert "works until Tue 8 Sep 2026" in html  # 28 days after the mail of 11 August
    assert "The link works until Tue 8 Sep 2026." in mail_html  # the mail says so too


def test_the_page_is_the_report_the_mail_stored_not_the_rows_as_they_are_now(apps: Clock) -> None:
    link, _ = mailed_link()
    enquiries = table("dev-ls-enquiries")
    for item in items("dev-ls-enquiries"):  # the week's rows go after the mail was sent
        enquiries.delete_item(Key={"month": item["month"], "enquiry_id": item["enquiry_id"]})
    page = report_page.handler(request(link), None)
    assert page["statusCode"] == 200
    assert "4 enquiries from Tue 4 Aug 2026 to Mon 10 Aug 2026" in page["body"]
    [views] = [i for i in items("dev-ls-reports") if i["item"] == "views"]
    assert views["views"] == 1 and views["period"] == WEEK


@pytest.mark.parametrize("accept", [BROWSER, "application/json"])
def test_an_expired_link_is_refused_with_a_page_or_json(apps: Clock, accept: str) -> None:
    link, _ = mailed_link()
    apps.advance(days=28)
    answer = report_page.handler(request(link, accept=accept), None)
    assert answer["statusCode"] == 410
    if accept == BROWSER:
        assert answer["headers"]["content-type"].startswith("text/html")
        assert "The latest weekly mail has a link that works." in answer["body"]
        assert "Lead sources" not in answer["body"]
    else:
        assert json.loads(answer["body"])["error"]["code"] == "link_expired"


class NoReads:
    """A report store that fails the test on any read."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the store was read ({name}) before the link was accepted")


NOW = dt.datetime(2026, 8, 11, 9, 0, tzinfo=dt.UTC)
WEEK = report_link.subject(dt.date(2026, 8, 4), dt.date(2026, 8, 10))


def token(subject: str = WEEK, action: str = report_link.ACTION, keys: Keyring = KEYS, days: int = 28) -> str:
    return issue_token(keys, subject=subject, action=action, ttl_seconds=days * 86400, now=NOW.timestamp())


GOOD = token()
OTHER_KEY = Keyring.single("k1", "another-deployments-key-" + "o" * 20)
REFUSED = {
    "no token": (f"{report_link.PATH}", 403),
    "cut": (f"{report_link.PATH}?t={GOOD[:-6]}", 403),
    "changed": (f"{report_link.PATH}?t={GOOD[:-2]}{'AA' if not GOOD.endswith('AA') else 'BB'}", 403),
    "another key": (f"{report_link.PATH}?t={token(keys=OTHER_KEY)}", 403),
    "another action (a dm review link)": (f"{report_link.PATH}?t={token(action='review')}", 403),
    "a subject that names no week": (f"{report_link.PATH}?t={token(subject='101#102')}", 403),
    "a year, not a week": (f"{report_link.PATH}?t={token(subject='2026-01-01..2026-12-31')}", 403),
    "another path": (f"/admin?t={GOOD}", 404),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_refused_link_reads_nothing(name: str) -> None:
    path, status = REFUSED[name]
    keyring_reads: list[int] = []

    def keyring() -> Keyring:
        keyring_reads.append(1)
        return KEYS

    page = WeekPage(NoReads(), keyring, NoReads(), 100, clock=lambda: NOW)
    browser = page(Request.read(request(f"{PAGE_URL}{path}")))
    program = page(Request.read(request(f"{PAGE_URL}{path}", accept="application/json")))
    assert browser["statusCode"] == program["statusCode"] == status
    assert browser["headers"]["content-type"].startswith("text/html")
    assert "<html lang=en>" in browser["body"] and '{"error"' not in browser["body"]
    assert json.loads(program["body"])["error"]["code"] in ("invalid_link", "not_found")
    if status == 404:
        assert not keyring_reads  # a wrong path does not even read the key


def test_an_expired_link_reads_nothing() -> None:
    page = WeekPage(NoReads(), lambda: KEYS, NoReads(), 100, clock=lambda: NOW + dt.timedelta(days=28))
    assert page(Request.read(request(f"{PAGE_URL}{report_link.PATH}?t={GOOD}")))["statusCode"] == 410


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_the_page_is_read_only(method: str) -> None:
    page = WeekPage(NoReads(), lambda: KEYS, NoReads(), 100, clock=lambda: NOW)
    answer = page(Request.read(request(f"{PAGE_URL}{report_link.PATH}?t={GOOD}", method=method)))
    assert answer["statusCode"] == 405


def test_a_good_link_reads_by_query_the_week_it_names_once_then_the_stored_report() -> None:
    from testsupport.ls import InMemoryReports, InMemoryStore

    store = hand_fixture()
    months: list[str] = []

    class Watched(InMemoryStore):
        def enquiries(self, month: str) -> list[Any]:
            months.append(month)
            return store.enquiries(month)

        def identity_visitors(self, identity_key: str) -> list[str]:
            return store.identity_visitors(identity_key)

        def touches(self, visitor_id: str) -> list[Any]:
            return store.touches(visitor_id)

    reports = InMemoryReports()  # a period stored nowhere: mailed before ls-reports existed
    page = WeekPage(Watched(), lambda: KEYS, reports, 100, clock=lambda: NOW)
    answer = page(Request.read(request(f"{PAGE_URL}{report_link.PATH}?t={GOOD}")))
    assert answer["statusCode"] == 200 and months == ["2026-08"]
    assert "4 enquiries from Tue 4 Aug 2026 to Mon 10 Aug 2026" in answer["body"]
    for _ in range(5):  # later views read the report the first one stored, and Query nothing
        assert page(Request.read(request(f"{PAGE_URL}{report_link.PATH}?t={GOOD}")))["body"] == answer["body"]
    assert months == ["2026-08"] and reports.reads == 6 and reports.views == {WEEK: 6}


@pytest.mark.parametrize("accept", [BROWSER, "application/json"])
def test_a_link_past_its_view_limit_is_refused_without_a_read(accept: str) -> None:
    from testsupport.ls import InMemoryReports

    reports = InMemoryReports()
    reports.reports[WEEK] = hand_report()
    page = WeekPage(NoReads(), lambda: KEYS, reports, 3, clock=lambda: NOW)
    link = f"{PAGE_URL}{report_link.PATH}?t={GOOD}"
    assert [page(Request.read(request(link, accept=accept)))["statusCode"] for _ in range(4)] == [200, 200, 200, 429]
    refused = page(Request.read(request(link, accept=accept)))
    assert refused["statusCode"] == 429 and reports.reads == 3 and reports.views == {WEEK: 3}
    if accept == BROWSER:
        assert "opened 3 times, its limit. The next weekly mail brings a new link." in refused["body"]
    else:
        assert json.loads(refused["body"])["error"]["code"] == "view_limit"


def hand_report() -> Any:
    from handlers.source_attributor.reporting import generate, owner_query

    return generate(hand_fixture(), owner_query(*report_link.period(WEEK)))


def test_the_period_in_a_token_is_a_week_or_so_and_nothing_else() -> None:
    assert report_link.period(WEEK) == (dt.date(2026, 8, 4), dt.date(2026, 8, 10))
    for bad in ("", "2026-08-04", "2026-08-10..2026-08-04", "2026-08-04..2026-09-30", "a..b"):
        with pytest.raises(ValueError):
            report_link.period(bad)


@pytest.mark.parametrize("accept", [BROWSER, "application/json"])
def test_a_throttled_key_read_answers_503_with_retry_after(
    apps: Clock, accept: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parameter Store's shared rate refused the keyring read (after the SDK's retries): the
    caller is told to come back (503, Retry-After), not given a 500."""
    from handlers.common.secrets import SecretThrottled
    from handlers.source_attributor import week_page

    link, _ = mailed_link()

    def throttled(secret_id: str) -> str:
        raise SecretThrottled(secret_id, "GetParameter throttled: ThrottlingException")

    monkeypatch.setattr(week_page, "get_secret", throttled)
    answer = report_page.handler(request(link, accept=accept), None)
    assert answer["statusCode"] == 503 and answer["headers"]["retry-after"] == "5"
    if accept == BROWSER:
        assert "Try again in a few seconds." in answer["body"]
    else:
        assert json.loads(answer["body"])["error"]["code"] == "busy"
    monkeypatch.setattr(report, "get_secret", throttled)
    with pytest.raises(SecretThrottled):  # the schedule's invocation: Lambda retries it
        report.handler({"job": "ls-report"}, None)
