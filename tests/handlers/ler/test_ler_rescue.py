"""ler-rescue: the junk digest's link sends a dropped lead back through the chain, once.

A link from the digest opens a page naming the lead (GET writes nothing: mail scanners fetch
links); its button POSTs, which records who rescued it on the junk object by a conditional
write and puts the lead back on ler-intake-queue marked ``rescue``; ler-filter keeps it and
ler-push creates the contact. A second click, a tampered, expired or foreign link: a 4xx page
for a browser, JSON for a program, and nothing written.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any
from urllib.parse import urlsplit

import pytest

from handlers.common.clock import utc_now
from handlers.common.entry import registry
from handlers.common.function_url import Request
from handlers.common.link_tokens import Keyring, issue_token
from handlers.lead_enricher.functions import digest
from handlers.lead_enricher.functions import rescue as rescue_fn
from handlers.lead_enricher.junk_digest import RescueLinks, summarise
from handlers.lead_enricher.rescue import RescueDesk
from handlers.lead_enricher.rescue_pages import Dropped
from handlers.lead_enricher.storage import ObjectStore
from tests.handlers.ler.conftest import JUNK_BUCKET, RECIPIENT, RESCUE_KEYRING, Ler, context
from testsupport import events

BROWSER = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
PROGRAM = {"accept": "application/json"}
SPAM = {
    "email": "outreach@rank-agency.co.uk",
    "name": "Mike Rank",
    "message": "Get your site on the first page of Google! http://a.example https://b.example "
    "http://c.example www.d.example",
}
LINK = re.compile(r"https?://[^\s'\"<>]+/rescue\?t=[\w.\-]+")


def http(url: str, method: str, headers: dict[str, str] = BROWSER) -> dict[str, Any]:
    """What ler-rescue answers one request to ``url`` (a Function URL event, payload 2.0)."""
    parts = urlsplit(url)
    event = events.url_event("", headers=headers, method=method)
    event["rawPath"] = parts.path
    event["rawQueryString"] = parts.query
    event["queryStringParameters"] = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
    answer: dict[str, Any] = rescue_fn.handler(event, context("dev-ler-rescue"))
    return answer


def press(link: str, headers: dict[str, str] = BROWSER, *, after_s: float = 5) -> dict[str, Any]:
    """A person: opens the link, reads the page for ``after_s`` seconds, presses its button."""
    page = http(link, "GET")
    found = re.search(r"<form method=post action='([^']+)'", page["body"])
    assert found, page["body"]
    later = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=after_s)
    registry.override(clock=lambda: later)
    try:
        return http(found.group(1).replace("&amp;", "&"), "POST", headers)
    finally:
        registry.override(clock=utc_now)


def dropped_and_digested(ler: Ler) -> dict[str, str]:
    """A link spammer and a honeypot bot dropped, a real lead kept; the digest sent: each
    dropped lead's rescue link by its address."""
    ler.post(SPAM)
    ler.post({"email": "sales@growth-hackers.co.uk", "name": "Max", "_gotcha": "x"})
    ler.pump()
    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).date()
    digest.handler({"day": tomorrow.isoformat()}, context())
    [mail] = ler.sent_mail()
    links = {}
    for item in re.findall(r"<li[^>]*>.*?</li>", mail.body, flags=re.S):
        found = LINK.search(item)
        who = re.search(r"<strong>(.*?)</strong>", item)
        if found and who:
            links[who.group(1)] = found.group(0)
    return links


def junk_entries(ler: Ler) -> dict[str, dict[str, Any]]:
    return {e["lead"]["fields"].get("email", ""): e for e in ler.objects(JUNK_BUCKET, "junk/").values()}


def creates(ler: Ler) -> list[str]:
    return [p.get("email", "") for method, _, p in ler.crm.calls if method == "create"]


def test_the_digest_links_each_dropped_lead_and_the_link_rescues_it_into_the_crm(ler: Ler) -> None:
    links = dropped_and_digested(ler)
    assert set(links) == {"Mike Rank (outreach@rank-agency.co.uk)", "Max (sales@growth-hackers.co.uk)"}
    link = links["Mike Rank (outreach@rank-agency.co.uk)"]
    before = junk_entries(ler)

    page = http(link, "GET")
    assert page["statusCode"] == 200 and page["headers"]["content-type"].startswith("text/html")
    assert "Mike Rank" in page["body"] and "Many links in the message (many_links)" in page["body"]
    assert "<form method=post action='/rescue?t=" in page["body"]
    assert junk_entries(ler) == before and not ler.queued()  # a GET (a mail scanner) acts on nothing

    done = press(link)
    assert done["statusCode"] == 200 and "Sent back: Mike Rank" in done["body"]
    assert f"rescued by {RECIPIENT}" in done["body"]
    entry = junk_entries(ler)["outreach@rank-agency.co.uk"]
    assert entry["rescue"]["by"] == RECIPIENT and entry["rescue"]["at"]
    assert entry["reason"] == "many_links"  # the junk record keeps why it was dropped

    seen = ler.pump()
    assert creates(ler) == ["outreach@rank-agency.co.uk"]
    [clean] = [e for e in seen if e["detail-type"] == "le.clean"]
    assert clean["detail"]["screening"]["reason"] == "rescued"
    assert clean["detail"]["rescue"]["by"] == RECIPIENT
    assert not [e for e in seen if e["detail-type"] == "le.junk"]  # not dropped again

    again = http(link, "POST")
    assert again["statusCode"] == 409
    assert f"already rescued by {RECIPIENT}" in again["body"]
    assert http(link, "GET")["statusCode"] == 409
    program = http(link, "POST", PROGRAM)
    assert program["statusCode"] == 409
    assert json.loads(program["body"])["error"]["code"] == "already_rescued"
    assert not ler.queued() and creates(ler) == ["outreach@rank-agency.co.uk"]


@pytest.mark.parametrize("headers", [BROWSER, PROGRAM])
def test_a_scanner_that_submits_the_form_at_once_rescues_nothing(ler: Ler, headers: dict[str, str]) -> None:
    """A mail scanner fetches the link and submits the form it finds, within a second; a
    person reads first. The scanner gets the button again (409) and nothing changes; the
    link and the person's later press still work."""
    link = dropped_and_digested(ler)["Mike Rank (outreach@rank-agency.co.uk)"]
    before = junk_entries(ler)
    action = re.search(r"action='([^']+)'", http(link, "GET")["body"])
    assert action and "&amp;c=v1." in action.group(1)
    bot = http(action.group(1).replace("&amp;", "&"), "POST", headers)  # at once
    assert bot["statusCode"] == 409
    if headers is BROWSER:
        assert "Nothing was sent: press the button below" in bot["body"] and "<form method=post" in bot["body"]
    else:
        assert json.loads(bot["body"])["error"]["code"] == "not_confirmed"
    assert http(link, "POST", headers)["statusCode"] == 409  # no confirmation at all
    forged = link + "&c=" + link.partition("?t=")[2]  # the link's own token is not a confirmation
    assert http(forged, "POST", headers)["statusCode"] == 409
    assert junk_entries(ler) == before and not ler.queued()
    assert press(link, headers)["statusCode"] == 200 and len(ler.queued()) == 1


def test_a_confirmation_is_for_its_own_link_and_expires(ler: Ler) -> None:
    links = dropped_and_digested(ler)
    mike, max_ = links["Mike Rank (outreach@rank-agency.co.uk)"], links["Max (sales@growth-hackers.co.uk)"]

    def confirmation(link: str) -> str:
        found = re.search(r"&amp;c=([\w.\-]+)'", http(link, "GET")["body"])
        assert found
        return found.group(1)

    def post_at(url: str, seconds: float) -> int:
        later = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)
        registry.override(clock=lambda: later)
        try:
            return int(http(url, "POST")["statusCode"])
        finally:
            registry.override(clock=utc_now)

    assert post_at(f"{mike}&c={confirmation(max_)}", 10) == 409  # Max's page, Mike's link
    assert post_at(f"{mike}&c={confirmation(mike)}", 901) == 409  # a page left open too long
    assert not ler.queued()
    assert post_at(f"{mike}&c={confirmation(mike)}", 10) == 200


def test_a_rescued_lead_is_listed_as_rescued_in_the_next_digest_without_a_link() -> None:
    entries = [
        ("junk/2026-11-27/f-1.json", {"reason": "many_links", "lane": "form",
                                      "lead": {"fields": {"email": "a@b.example", "name": "Ann Lee"}},
                                      "rescue": {"by": "ops@example.com", "at": "2026-11-28T09:30:00+00:00"}}),
        ("junk/2026-11-27/f-2.json", {"reason": "many_links", "lane": "form",
                                      "lead": {"fields": {"email": "c@d.example"}}}),
    ]
    links = RescueLinks(lambda key: f"https://x.example/rescue?t={key}", 14, "Europe/London")
    text = summarise(dt.date(2026, 11, 27), entries, links=links).text()
    assert "Rescued by ops@example.com on Sat 28 Nov 2026, 09:30 GMT" in text
    assert "junk/2026-11-27/f-1.json" not in text.split("Detail:")[0]
    assert "Not junk: send c@d.example to the CRM: https://x.example/rescue?t=junk/2026-11-27/f-2.json" in text
    assert "The links work for 14 days." in text


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every junk object ler-rescue reads."""
    seen: list[str] = []
    real = ObjectStore.get

    def spy(self: ObjectStore, bucket: str, key: str) -> Any:
        seen.append(key)
        return real(self, bucket, key)

    monkeypatch.setattr(ObjectStore, "get", spy)
    return seen


def test_bad_links_answer_4xx_before_anything_is_read_or_written(ler: Ler, reads: list[str]) -> None:
    link = dropped_and_digested(ler)["Mike Rank (outreach@rank-agency.co.uk)"]
    base, _, token = link.partition("?t=")
    before = junk_entries(ler)
    keyring = Keyring.from_secret_string(RESCUE_KEYRING)
    now = dt.datetime.now(dt.UTC).timestamp()
    key = next(iter(ler.objects(JUNK_BUCKET, "junk/")))
    expired = issue_token(keyring, subject=key, action="rescue", ttl_seconds=60, now=now - 3600)
    other_action = issue_token(keyring, subject=key, action="confirm", ttl_seconds=600, now=now)
    foreign = issue_token(Keyring.single("k1", "another-key-" + "x" * 30), subject=key,
                          action="rescue", ttl_seconds=600, now=now)
    not_junk = issue_token(keyring, subject="records/f-1.json", action="rescue", ttl_seconds=600, now=now)
    reads.clear()  # the digest read the junk log; from here only ler-rescue reads
    cases = {
        "tampered": (f"{base}?t={token[:-3]}abc", 403, "invalid_link"),
        "no token": (base, 403, "invalid_link"),
        "expired": (f"{base}?t={expired}", 410, "link_expired"),
        "another action": (f"{base}?t={other_action}", 403, "invalid_link"),
        "another key": (f"{base}?t={foreign}", 403, "invalid_link"),
        "not a junk key": (f"{base}?t={not_junk}", 400, "invalid_subject"),
        "another path": (link.replace("/rescue?", "/other?"), 404, "not_found"),
    }
    for case, (url, status, code) in cases.items():
        for method in ("GET", "POST"):
            page = http(url, method)
            assert page["statusCode"] == status, (case, method)
            assert page["headers"]["content-type"].startswith("text/html"), case
            assert '{"error"' not in page["body"], case
            answer = http(url, method, PROGRAM)
            assert answer["statusCode"] == status, case
            assert json.loads(answer["body"])["error"]["code"] == code, case
    assert reads == [] and junk_entries(ler) == before and not ler.queued()


def desk(queue: Any = None) -> RescueDesk:
    """ler-rescue's desk as wired, with another queue when given."""
    service: RescueDesk = registry.service(rescue_fn)
    return service if queue is None else RescueDesk(
        service.config, service.store, queue, service.keyring, service.clock)


def claims_of(link: str) -> Any:
    from handlers.common.link_tokens import verify_token

    token = link.partition("?t=")[2]
    keyring = Keyring.from_secret_string(RESCUE_KEYRING)
    return verify_token(token, keyring, action="rescue", now=dt.datetime.now(dt.UTC).timestamp())


def test_of_two_clicks_read_together_only_one_rescues(ler: Ler) -> None:
    link = dropped_and_digested(ler)["Mike Rank (outreach@rank-agency.co.uk)"]
    claims = claims_of(link)
    service = desk()
    stale = service._read(claims.subject)  # the second click read the object before the first wrote
    assert stale is not None
    assert press(link)["statusCode"] == 200
    late = service._rescue(Request("POST", BROWSER, {}, b""), stale, claims, dt.datetime.now(dt.UTC))
    assert late["statusCode"] == 409 and "already rescued" in late["body"]
    assert len(ler.queued()) == 1  # the lead went back once


class RefusingQueue:
    def send(self, leads: Any) -> int:
        raise RuntimeError("the intake queue refused the lead")


def test_a_lead_the_queue_refuses_is_not_marked_rescued_and_the_link_still_works(ler: Ler) -> None:
    link = dropped_and_digested(ler)["Mike Rank (outreach@rank-agency.co.uk)"]
    claims = claims_of(link)
    service = desk(RefusingQueue())
    dropped = service._read(claims.subject)
    assert isinstance(dropped, Dropped)
    failed = service._rescue(Request("POST", BROWSER, {}, b""), dropped, claims, dt.datetime.now(dt.UTC))
    assert failed["statusCode"] == 503 and "the link still works" in failed["body"]
    assert "rescue" not in junk_entries(ler)["outreach@rank-agency.co.uk"]
    assert press(link)["statusCode"] == 200  # the real queue takes it on the next click
    assert len(ler.queued()) == 1


def test_the_digest_quotes_a_message_without_tappable_web_addresses() -> None:
    """A mail client turns an address in the quote into a link beside the rescue link."""
    entries = [("junk/2026-11-27/f-1.json", {
        "reason": "many_links", "lane": "form",
        "lead": {"fields": {"email": "a@b.example"},
                 "message": "Rank first! http://a.example/x?y=1, https://b.example and www.c.example."},
    })]
    digest = summarise(dt.date(2026, 11, 27), entries)
    for part in (digest.text(), digest.mail().html):
        assert "[link to a.example], [link to b.example] and [link to c.example]." in part
        assert "http://a.example" not in part and "www.c.example" not in part


class DeniedStore:
    """S3 as it answers a role without s3:ListBucket for a key that is not there: 403."""

    def get(self, bucket: str, key: str) -> Any:
        from botocore.exceptions import ClientError

        raise ClientError({"Error": {"Code": "AccessDenied", "Message": "Access Denied"}}, "GetObject")


def test_a_link_to_a_record_that_is_gone_answers_404_not_a_crash(ler: Ler) -> None:
    keyring = Keyring.from_secret_string(RESCUE_KEYRING)
    now = dt.datetime.now(dt.UTC).timestamp()
    token = issue_token(keyring, subject="junk/2026-11-27/f-gone.json", action="rescue",
                        ttl_seconds=600, now=now)
    url = f"https://x.lambda-url.eu-west-2.on.aws/rescue?t={token}"
    for method in ("GET", "POST"):
        assert http(url, method)["statusCode"] == 404  # moto: NoSuchKey
    service = desk()
    denied = RescueDesk(service.config, DeniedStore(), service.queue, service.keyring, service.clock)  # type: ignore[arg-type]
    event = events.url_event("", headers=PROGRAM, method="POST")
    event.update(rawPath="/rescue", queryStringParameters={"t": token})
    answer = denied.web(Request.read(event))
    assert answer["statusCode"] == 404 and json.loads(answer["body"])["error"]["code"] == "unknown_lead"
    assert not ler.queued()


def test_a_redelivered_drop_keeps_the_rescue_on_its_junk_record(ler: Ler) -> None:
    """EventBridge delivers le.junk at least once and a form may post the same body twice: the
    drop arriving again after a person rescued the lead leaves who and when on the record."""
    links = dropped_and_digested(ler)
    for link in links.values():
        assert press(link)["statusCode"] == 200
    rescued = junk_entries(ler)
    assert {e["stage"] for e in rescued.values()} == {"filter", "intake"}
    assert all(e["rescue"]["by"] == RECIPIENT for e in rescued.values())

    [drop] = [e for e in ler.delivered if e["detail-type"] == "le.junk"]
    ler.deliver(drop)  # ler-junk-writer, again
    ler.post({"email": "sales@growth-hackers.co.uk", "name": "Max", "_gotcha": "x"})  # intake, again
    assert junk_entries(ler) == rescued
