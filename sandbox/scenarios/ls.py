"""Lead source attributor: arrivals, an enquiry on a second device, the report.

Two visitors' browsers send beacons to ls-capture's Function URL from the site's origin; one
person arrives from a Google search on a laptop and from the newsletter on a phone, and
enquires from the phone ("heard about you on a podcast"), then again from the laptop. The
enquiries table's stream drives ls-stitch, which links both devices into one identity, and the
report, read through ls-report's AWS_IAM Function URL with a SigV4-signed request, credits the
first and last non-direct touches and states the unattributed share. Then the clock jumps to
the next Monday morning (firing nothing on the way) and the weekly schedule mails the owner
the week's report; the owner opens its signed link on ls-report-page, and a cut copy of the
link is refused before any table is read. ls plays last (``scenarios.ORDER``): no other
system's day runs on the moved clock.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sandbox.core import HttpAnswer, Sandbox
from sandbox.meter import DYNAMODB_READS
from sandbox.report import Report

SITE = "https://www.example.com"
BROWSER = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15"
EMAIL_HASH_KEY = "sandbox-email-hash-key-0123456789abcdef0123456789"
LINK_KEYRING = json.dumps({"active_kid": "k1", "keys": {"k1": "sandbox-ls-report-link-" + "r" * 24}})
PAGE_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def next_monday_morning(now: dt.datetime) -> dt.datetime:
    """07:30 UTC on the Monday after ``now``: past the weekly schedule's hour in any zone the
    stack may set (UTC to Europe/London), so "last week" includes today."""
    day = now.date() + dt.timedelta(days=7 - now.weekday())
    return dt.datetime.combine(day, dt.time(7, 30), dt.UTC)


class LeadSourceDay:
    key = "ls"
    title = "Lead source attributor"

    def prepare(self, sb: Sandbox) -> None:
        sb.set_secret("ls-email-hash-key", EMAIL_HASH_KEY)
        if sb.topology.functions.get(sb.name("ls-report-page")):
            sb.set_secret("ls-report-link-key", LINK_KEYRING)

    def _beacon(
        self, sb: Sandbox, body: dict[str, Any], cookie: str | None = None, **headers: str
    ) -> HttpAnswer:
        sent = {"origin": SITE, "user-agent": BROWSER, "content-type": "text/plain;charset=UTF-8"}
        if cookie:
            sent["cookie"] = f"ls_vid={cookie}"
        sent.update(headers)
        return sb.http("ls-capture", "POST", "/", body=json.dumps(body), headers=sent)

    def play(self, sb: Sandbox, report: Report) -> None:
        with report.step("A laptop arrives from a Google search") as step:
            answer = self._beacon(
                sb,
                {
                    "kind": "arrival",
                    "url": f"{SITE}/pricing",
                    "referrer": "https://www.google.com/",
                },
            )
            laptop = answer.json()["visitor_id"]
            cookie = {k.lower(): v for k, v in answer.headers.items()}.get("set-cookie", "-")
            step.note(f"HTTP {answer.status}; set-cookie {cookie.split(';')[0][:32]}...")
            sb.drain()
        with report.step("A phone arrives from the newsletter (UTM tags), then browses") as step:
            answer = self._beacon(
                sb,
                {
                    "kind": "arrival",
                    "url": f"{SITE}/?utm_source=newsletter&utm_medium=email&utm_campaign=november",
                    "referrer": "",
                },
            )
            phone = answer.json()["visitor_id"]
            inner = self._beacon(
                sb,
                {"kind": "arrival", "url": f"{SITE}/contact", "referrer": f"{SITE}/"},
                cookie=phone,
            )
            step.note(f"newsletter: HTTP {answer.status}; internal page: {inner.json()}")
            sb.drain()
        with report.step("A crawler and a foreign site send beacons") as step:
            bot = self._beacon(
                sb,
                {"kind": "arrival", "url": f"{SITE}/", "referrer": ""},
                **{"user-agent": "Googlebot/2.1"},
            )
            foreign = self._beacon(
                sb,
                {"kind": "arrival", "url": f"{SITE}/", "referrer": ""},
                origin="https://evil.example.net",
            )
            step.note(f"crawler: HTTP {bot.status}; foreign origin: HTTP {foreign.status}")
            sb.drain()
        report.check(
            "the crawler is dropped (204) and a foreign origin refused (403)",
            bot.status == 204 and foreign.status == 403,
        )
        with report.step("The phone enquires: 'heard about you on a podcast'") as step:
            answer = self._beacon(
                sb,
                {
                    "kind": "enquiry",
                    "url": f"{SITE}/contact",
                    "email": "Jane.Doe@example.org",
                    "heard_about": "Heard about you on a podcast",
                    "submission_id": "form-0001-phone",
                },
                cookie=phone,
            )
            step.note(f"HTTP {answer.status} {answer.text}")
            sb.drain()
        with report.step("Later that day the laptop enquires with the same email") as step:
            answer = self._beacon(
                sb,
                {
                    "kind": "enquiry",
                    "url": f"{SITE}/contact",
                    "email": "jane.doe@example.org ",
                    "heard_about": "",
                    "submission_id": "form-0002-laptop",
                },
                cookie=laptop,
            )
            step.note(f"HTTP {answer.status}")
            sb.drain()
            identities = sb.items("ls-identities")
            step.state(
                "ls-identities",
                [(i["identity_key"][:12] + "...", i["visitor_id"][:8]) for i in identities],
            )
        with report.step("The owner reads the report (AWS_IAM URL, signed request)") as step:
            unsigned = sb.http("ls-report", "GET", "/?mode=lenient")
            answer = sb.http("ls-report", "GET", "/?mode=lenient", sign=True)
            document = answer.json() if answer.status == 200 else {}
            step.note(f"unsigned: HTTP {unsigned.status}; signed: HTTP {answer.status}")
            for rule, result in (document.get("rules") or {}).items():
                sources = ", ".join(f"{s['source']} {s['enquiries']}" for s in result["sources"])
                step.note(
                    f"{rule}: {sources or '-'}; unattributed {result['unattributed']['enquiries']}"
                )
        touches = sb.items("ls-touches")
        enquiries = sb.items("ls-enquiries")
        linked = {i["visitor_id"] for i in sb.items("ls-identities")}
        report.check(
            "one touch per arrival and one 'asked' touch (no internal page, no bot)",
            sorted(t["source"] for t in touches) == ["google", "newsletter", "podcast_x"],
            str(sorted((t["source"], t["medium"]) for t in touches)),
        )
        report.check(
            "two enquiries, the email stored only as a keyed hash",
            len(enquiries) == 2 and all("@" not in json.dumps(e) for e in enquiries),
        )
        report.check(
            "stitching linked the phone and the laptop into one identity",
            {laptop, phone} <= linked,
            f"{len(linked)} visitor ids linked",
        )
        first = _rule(document, "first_touch")
        report.check(
            "the report needs a signature; first touch credits google, none unattributed",
            unsigned.status == 403
            and answer.status == 200
            and first.get("google") == 2
            and document["rules"]["first_touch"]["unattributed"]["enquiries"] == 0,
            str(first),
        )
        if sb.topology.functions.get(sb.name("ls-report-page")):
            self._weekly_mail(sb, report)
        report.check(
            "no call was denied",
            not [d for d in sb.denials() if d.function and d.function.startswith(sb.name("ls-"))],
        )

    def _weekly_mail(self, sb: Sandbox, report: Report) -> None:
        """Monday: the mail, its link opened on ls-report-page, a cut link refused."""
        recipient = sb.graph.config.systems.ls.report_recipient if sb.graph.config.systems.ls else ""
        page_fn = sb.name("ls-report-page")
        with report.step("Next Monday morning the owner's weekly mail arrives") as step:
            sb.clock.jump_to(next_monday_morning(sb.clock.now()))
            sb.fire("ls-report")
            sb.drain()
            mails = [m for m in sb.outbox.to(recipient or "") if m.function == sb.name("ls-report")]
            found = re.search(r"https?://\S+/report\?t=[\w.\-]+", mails[-1].text if mails else "")
            link = found.group(0) if found else ""
            step.note(mails[-1].subject if mails else "no mail")
        report.check(
            "the weekly mail reached the owner with a signed link to the report page",
            bool(mails) and bool(link) and bool(mails[-1].html),
            link[:60] + "...",
        )
        with report.step("The owner opens the link on a phone; a cut copy is refused") as step:
            before = len(sb.interceptor.ledger)
            page = self._open(sb, link, PAGE_ACCEPT)
            read = [r for r in sb.interceptor.ledger[before:] if r.function == page_fn]
            cut = self._open(sb, link[:-5], PAGE_ACCEPT)
            program = self._open(sb, link[:-5], "application/json")
            refused_calls = [
                r.operation for r in sb.interceptor.ledger[before + len(read):]
                if r.function == page_fn and r.service == "dynamodb"
            ]
            step.note(f"page: HTTP {page.status}; cut link: HTTP {cut.status} "
                      f"({cut.headers.get('content-type', cut.headers.get('Content-Type', ''))}); "
                      f"to a program: HTTP {program.status} {program.text[:60]}")
            step.state("the page's DynamoDB calls", sorted({r.operation for r in read if r.service == "dynamodb"}))
        report.check(
            "the link opens the week's report as a page: the report the mail stored, one "
            "counted view and one read",
            page.status == 200
            and "2 enquiries" in page.text
            and "Not known (unattributed)" in page.text
            and sorted(r.operation for r in read if r.service == "dynamodb")
            == ["GetItem", "UpdateItem"],
        )
        with report.step("The link is opened again and again (a forwarded mail)") as step:
            views = open_repeatedly(sb, link, views=VIEWS_CHECKED)
            step.note(views.line())
        report.check(
            f"{VIEWS_CHECKED} more views cost at most 2 DynamoDB reads each",
            views.served == VIEWS_CHECKED and views.reads_per_view <= 2,
            views.line(),
        )
        report.check(
            "a cut link gets a page (403) and a program the JSON error, with no table read",
            cut.status == 403
            and "<html" in cut.text
            and program.status == 403
            and program.json()["error"]["code"] == "invalid_link"
            and not refused_calls,
            str(refused_calls),
        )

    @staticmethod
    def _open(sb: Sandbox, url: str, accept: str) -> HttpAnswer:
        parts = urlsplit(url)
        return sb.http(
            "ls-report-page", "GET", f"{parts.path}?{parts.query}",
            headers={"accept": accept, "user-agent": BROWSER},
        )


VIEWS_CHECKED = 10


@dataclass(frozen=True)
class Views:
    """What opening one link repeatedly cost on ls-report-page."""

    views: int
    served: int
    reads: int
    writes: int
    seconds: float

    @property
    def reads_per_view(self) -> float:
        return self.reads / self.views if self.views else 0.0

    def line(self) -> str:
        return (f"{self.views} views in {self.seconds:.1f} s ({self.served} answered 200): "
                f"{self.reads} DynamoDB reads, {self.reads_per_view:.2f} a view; "
                f"{self.writes} other DynamoDB calls")


def open_repeatedly(
    sb: Sandbox, link: str, *, views: int | None = None, seconds: float | None = None
) -> Views:
    """Open ``link`` on ls-report-page ``views`` times, or for ``seconds``, one at a time,
    counting the page's DynamoDB calls in the sandbox's ledger."""
    page_fn = sb.name("ls-report-page")
    before, started, count, served = len(sb.interceptor.ledger), time.monotonic(), 0, 0
    while (views is not None and count < views) or (
        seconds is not None and time.monotonic() - started < seconds
    ):
        served += LeadSourceDay._open(sb, link, PAGE_ACCEPT).status == 200
        count += 1
    calls = [r.operation for r in sb.interceptor.ledger[before:]
             if r.function == page_fn and r.service == "dynamodb"]
    reads = sum(op in DYNAMODB_READS for op in calls)
    return Views(count, served, reads, len(calls) - reads, time.monotonic() - started)


def _rule(document: dict[str, Any], name: str) -> dict[str, int]:
    rule = (document.get("rules") or {}).get(name) or {"sources": []}
    return {s["source"]: s["enquiries"] for s in rule["sources"]}


SCENARIO = LeadSourceDay()
