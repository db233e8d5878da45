"""Every page and mail a person reads, rendered by the real renderers from records shaped as
the systems store them: what the browser checks look at (tests/see) and what ``make demo``
writes out for a person to open.

Each document says whom it must name and whether it has a main action that must sit in the
first screen. SMS are listed apart: they are measured in GSM-7, not rendered.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from handlers.common import html_kit as kit
from handlers.common import sms as sms_kit
from handlers.common.degradations import Degradation, deployer_mail
from handlers.common.function_url import Request
from handlers.common.link_tokens import Keyring, issue_short_token, issue_token
from handlers.common.mail_from import from_address
from handlers.common.quiet import all_quiet
from handlers.duplicate_merger import digest, pages
from handlers.lead_enricher import rescue_pages
from handlers.lead_enricher.junk_digest import RescueLinks, summarise
from handlers.review_requests import drafting, handover, notice
from handlers.review_requests.domain import Channel as RrsChannel
from handlers.review_requests.domain import Purpose, request_id_for
from handlers.review_requests.sending import feedback_link, feedback_ref
from handlers.source_attributor import report_link, report_mail, stored_report
from handlers.source_attributor.attribution import Report, RuleResult
from handlers.source_attributor.records import Enquiry, Touch
from handlers.source_attributor.week_page import WeekPage
from handlers.upsell_recommender import taps
from handlers.upsell_recommender.domain import ADD_ACTION, Channel, Contact, OfferState
from handlers.upsell_recommender.nudges import compose
from handlers.upsell_recommender.offers import Activity
from handlers.upsell_recommender.report import Rollup, render
from handlers.upsell_recommender.sending import link_subject, link_url
from handlers.upsell_recommender.taps import AddlinkDeps
from testsupport.browser import DESKTOP, PHONE
from testsupport.browser import browser as headless_browser
from testsupport.ls import InMemoryReports, InMemoryStore

FUNCTION_URL = "https://" + "a" * 32 + ".lambda-url.eu-west-2.on.aws/"
"""A Function URL exactly as long as a real one (``<32 characters>.lambda-url.<region>.on.aws``,
https://docs.aws.amazon.com/lambda/latest/dg/lambda-urls.html): links are measured with it."""

DM_URL = "https://" + "d" * 32 + ".lambda-url.us-east-1.on.aws"
SHOP = "Example Shop"
"""upsr's businessName: the shop customers bought from (at most 24 characters)."""
SHOP_EMAIL = "orders@example-shop.example"
SHOP_SITE = "https://www.example-shop.example"
TRADE = "Acme Heating"
"""rrs's businessName: the home-services business whose customer is asked."""
TRADE_EMAIL = "office@acme-heating.example"
FEEDBACK_URL = "https://forms.example/acme-feedback"
"""A feedback form address as short as a hosted form's (the rrs dev stack's is 32 characters)."""
REVIEW_URL = "https://g.page/r/CdE1xAmPlE2aEBM/review"
"""A Google Business Profile review link as long as a real one."""
NOW = dt.datetime(2026, 8, 3, 9, 0, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Document:
    """One page or mail."""

    name: str
    kind: str  # "page" | "mail"
    html: str
    names: tuple[str, ...]
    """Who the document must name, in its HTML and (for a mail) its plain text."""
    action: bool = False
    """Whether a main action (``data-primary``) must be in the first screen."""
    text: str | None = None
    """A mail's plain-text part."""
    status: int = 200
    opens: tuple[tuple[str, str], ...] = ()
    """(link in the document, the gallery file it opens): ``write`` points the link at the
    file, so the mail's button works in the folder a person opens."""


@dataclass(frozen=True)
class Sms:
    name: str
    text: str


@dataclass(frozen=True)
class CustomerMessage:
    """One message to a customer, as its system hands it to SES or End User Messaging SMS."""

    name: str
    business: str
    """The stack's businessName for the system that writes it."""
    channel: str  # "sms" | "email"
    text: str
    html: str = ""
    sender: str = ""
    """An email's From, as the function is wired to send it (``emails.from_address``)."""


def _token(n: int) -> str:
    """A link token as long as a real one (``link_tokens.issue_token`` over a pair subject)."""
    keys = Keyring.from_secret_string('{"active_kid": "k1", "keys": {"k1": "' + "s" * 40 + '"}}')
    return issue_token(keys, subject=f"{100 + n}#{200 + n}", action="confirm", ttl_seconds=86_400 * 30, now=NOW.timestamp())


# dm ------------------------------------------------------------------------------------------


def dm_pair(low: str = "101", high: str = "102") -> dict[str, Any]:
    """A proposed pair as dm-score writes it (``store.PairStore.upsert``)."""
    return {
        "pair_key": f"{low}#{high}",
        "band": "propose",
        "score": 10.9,
        "baseline": -21.4,
        "evidence": "person",
        "explanation": "same email (shared by 3 contacts), same mobile, similar surname",
        "terms": [
            {"field": "email", "level": "exact", "weight": 14.2, "rarity": 0.0001},
            {"field": "mobile", "level": "exact", "weight": 12.1, "rarity": 0.0001},
            {"field": "first", "level": "exact", "weight": 3.9, "rarity": 0.02},
            {"field": "last", "level": "similar", "weight": 2.1, "rarity": 0.001},
        ],
        "contacts": {
            "low": {"name": "Wanda Williams", "email": "wanda.williams@northwind-traders.example",
                    "phone": "+1 415 555 0101", "company": "Northwind Traders", "city": "Boston"},
            "high": {"name": "Wanda Wixlliams", "email": "wanda.williams@northwind-traders.example",
                     "phone": "+1 415 555 0101", "company": "Northwind Traders Ltd", "city": "Cambridge"},
        },
    }


def dm_person() -> list[dict[str, Any]]:
    """Three records of one person, as three proposed pairs (best first)."""
    cards = {"301": {"name": "Zed Quarrington", "email": "zq@one.example", "phone": "+1 918 555 0144", "city": "Tulsa"},
             "302": {"name": "Zed Quarington", "email": "zed.q@two.example", "phone": "+1 918 555 0144", "city": "Tulsa"},
             "303": {"name": "Zed Quarrington", "email": "zed@three.example", "phone": "+1 918 555 0144", "city": "Tulsa"}}
    why = "same phone (shared by 3 contacts), same city, same rare first name"
    return [{**dm_pair(a, b), "score": score, "explanation": why, "terms": [],
             "contacts": {"low": cards[a], "high": cards[b]}}
            for (a, b), score in ((("301", "303"), 2.8), (("301", "302"), 1.0), (("302", "303"), 1.0))]


DM_LINK_DAYS, DM_UNDO_DAYS = 30, 90
"""The dev stack's ``linkTtlDays`` and ``undoDays``."""


def dm_documents() -> Iterator[Document]:
    pair = dm_pair()
    second = {**dm_pair("310", "311"), "score": 4.1,
              "explanation": "same phone, same rare surname, different first name",
              "contacts": {"low": {"name": "Ravi Okonkwo-Lindqvist", "phone": "+44 20 7946 0018", "company": "Fabrikam"},
                           "high": {"name": "Priya Okonkwo-Lindqvist", "phone": "+44 20 7946 0018", "company": "Fabrikam"}}}
    link = f"{DM_URL}/confirm?t={_token(1)}"
    yield Document("dm-proposal", "page", pages.proposal(pair, link, link.replace("confirm", "reject"),
                                                 link_days=DM_LINK_DAYS, undo_days=DM_UNDO_DAYS)["body"],
                   ("Wanda Williams", "Wanda Wixlliams"), action=True)
    yield Document("dm-proposal-reject", "page",
                   pages.proposal(second, link, link.replace("confirm", "reject"), chosen="reject",
                                  link_days=DM_LINK_DAYS, undo_days=DM_UNDO_DAYS)["body"],
                   ("Ravi Okonkwo-Lindqvist", "Priya Okonkwo-Lindqvist"), action=True)
    merge = {"merge_id": "mrg_2026_08_03_0a1b2c", "pair_key": "101#102", "kept_id": "101",
             "merged_id": "102", "undoable_until": "2026-09-02"}
    named = pages.names(pair)
    yield Document("dm-undo", "page", pages.undo_confirmation(merge, f"{DM_URL}/undo?t={_token(2)}", named)["body"],
                   ("Wanda Williams", "Wanda Wixlliams"), action=True)
    who = pages.who(pair)
    yield Document("dm-merging", "page",
                   pages.in_progress(who, f"{DM_URL}/confirm?t={_token(1)}", undo=False)["body"],
                   ("Wanda Williams", "Wanda Wixlliams"), action=True, status=202)
    yield Document("dm-undoing", "page",
                   pages.in_progress(who, f"{DM_URL}/undo?t={_token(2)}", undo=True)["body"],
                   ("Wanda Williams", "Wanda Wixlliams"), action=True, status=202)
    yield Document("dm-merged", "page", pages.merged(named, "101", "102", f"{DM_URL}/undo?t={_token(3)}", "2026-09-02")["body"],
                   ("Wanda Williams", "Wanda Wixlliams"))
    twice = {"101": "Ann Lee", "102": "Ann Lee"}
    yield Document("dm-merged-one-name", "page",
                   pages.merged(twice, "101", "102", f"{DM_URL}/undo?t={_token(3)}", "2026-09-02")["body"],
                   ("Ann Lee",))
    yield Document("dm-undo-one-name", "page",
                   pages.undo_confirmation(merge, f"{DM_URL}/undo?t={_token(2)}", twice)["body"],
                   ("Ann Lee",), action=True)
    yield Document("dm-rejected", "page",
                   pages.result(f"Recorded: not a duplicate: {pages.who(second)}",
                                "Recorded: not a duplicate. This pair will not be proposed again.")["body"],
                   ("Ravi Okonkwo-Lindqvist", "Priya Okonkwo-Lindqvist"))
    browser = Request("GET", {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}, {}, b"")
    # As review.App answers a used or decided link (issue 40): what became of the pair, by whom
    # and when, and the undo while it is valid.
    decided = f"{pages.who(pair)} were already merged by owner@example.com on Mon 3 Aug 2026, 10:00 BST."
    yield Document("dm-link-used", "page",
                   kit.answer(browser, 409, "link_used", f"This link was already used: {pages.who(pair)}",
                              decided, more=pages.undo_offer(f"{DM_URL}/undo?t={_token(7)}", "2026-09-02"))["body"],
                   ("Wanda Williams",), status=409)
    rejected = (f"{pages.who(second)} were already recorded as not a duplicate by owner@example.com "
                "on Mon 3 Aug 2026, 10:00 BST.")
    yield Document("dm-already-decided", "page",
                   kit.answer(browser, 409, "already_decided", f"Already decided: {pages.who(second)}",
                              rejected, more=kit.para(pages.NOT_A_DUPLICATE_NEXT))["body"],
                   ("Ravi Okonkwo-Lindqvist", "Priya Okonkwo-Lindqvist"), status=409)
    yield Document("dm-withdrawn", "page",
                   kit.answer(browser, 410, "proposal_withdrawn", f"Nothing to decide: {pages.who(pair)}",
                              pages.WITHDRAWN)["body"], ("Wanda Williams",), status=410)
    yield Document("dm-gone", "page",
                   kit.answer(browser, 410, "gone", f"Nothing to merge: {pages.who(pair)}", pages.GONE)["body"],
                   ("Wanda Williams",), status=410)
    zeds = dm_person()
    yield Document("dm-person", "page",
                   pages.person([pages.Choice(zeds[0], "Already merged by owner@example.com on Mon 3 Aug 2026, "
                                              "10:00 BST.", still=pages.undo_offer(f"{DM_URL}/undo?t={_token(9)}",
                                                                                  "2026-09-02")),
                                 pages.Choice(zeds[1], "", link, link.replace("confirm", "reject")),
                                 pages.Choice(zeds[2], merged_away=("303", "301"))])["body"],
                   ("Zed Quarrington", "Zed Quarington"), action=True)
    items = [
        digest.DigestItem(p["pair_key"], pages.who(p), pages.company(p), pages.reason(p),
                          pages.confidence(p["score"]), p["score"],
                          review=f"{DM_URL}/review?t={_token(4)}", confirm=link,
                          reject=link.replace("confirm", "reject"))
        for p in (pair, second)
    ]
    items.insert(1, digest.DigestItem(zeds[0]["pair_key"], pages.everyone(zeds), "", pages.reason(zeds[0]),
                                      pages.confidence(zeds[0]["score"]), zeds[0]["score"],
                                      review=f"{DM_URL}/review?t={_token(8)}", records=3))
    auto = {**dm_pair("120", "121"), "band": "automatic", "score": 15.3,
            "explanation": "same email, same mobile, same rare surname",
            "contacts": {"low": {"name": "Li Na Zhou", "company": "Contoso"}, "high": {"name": "Lina Zhou", "company": "Contoso"}}}
    autos = [digest.DigestItem(auto["pair_key"], pages.who(auto), pages.company(auto), pages.reason(auto),
                               pages.confidence(auto["score"]), auto["score"], undo=f"{DM_URL}/undo?t={_token(5)}")]
    run = {"run_id": "2026-W32", "started_at": NOW.isoformat(), "capped_count": 1, "capped": [{"key": "phone", "value": "+1 800 555 ••••", "size": 412}]}
    bands = ["Bands as configured (proposed from +0.00 bits, merged automatically from +12.00): "
             "5 of your decisions read so far; each kind of pair needs 30 before they move its bands."]
    d = digest.compose(run, items, autos, bands=bands)
    yield Document("dm-digest", "mail", d.html, ("Wanda Williams", "Wanda Wixlliams", "Priya Okonkwo-Lindqvist", "Li Na Zhou",
                                                "Zed Quarington"),
                   action=True, text=d.text)
    # Issue 27: what the sweep finished and what a merge could not keep, with what to do.
    kept = {**dm_pair("130", "131"), "band": "automatic",
            "contacts": {"low": {"name": "Jordan Ellis"}, "high": {"name": "Jordan Elis"}}}
    rows = {"101#102": pair, "130#131": kept}
    notes: list[dict[str, Any]] = [
        {"kind": "emails_not_added", "pair_key": "130#131", "merge_id": "mrg_2026_08_03_1c2d3e",
         "kept_id": "130", "merged_id": "131", "emails": ["jordan.elis@oldmail.example"]},
        {"kind": "resumed", "pair_key": "101#102", "claim": "merging", "status": "merged",
         "merge_id": "mrg_2026_08_03_0a1b2c", "by": "automatic"},
    ]
    notices = digest.notices(notes, [], rows.get, lambda merge_id: f"{DM_URL}/undo?t={_token(6)}")
    d = digest.compose(run, [], [], notices=notices)
    yield Document("dm-digest-notes", "mail", d.html,
                   ("Jordan Ellis", "Jordan Elis", "jordan.elis@oldmail.example", "Wanda Williams", "Wanda Wixlliams"),
                   text=d.text)


# upsr -----------------------------------------------------------------------------------------


def upsr_documents() -> Iterator[Document]:
    until = int(NOW.timestamp())
    new = Activity(nudged=3, taps=2, taken=1, closed=4, value={"GBP": Decimal("28.00")})
    totals = Activity(nudged=41, taps=15, taken=9, closed=36, value={"GBP": Decimal("252.00")})
    mail = render(Rollup(new, totals, until - 86400, until, until - 30 * 86400,
                         counts={OfferState.CHOSEN: 1, OfferState.SUPPRESSED: 1, OfferState.NO_FIT: 4},
                         closed_now=2), zone="Europe/London")
    yield Document("upsr-rollup", "mail", mail.html, ("add-ons taken", "£28.00", "£252.00"), text=mail.text)
    redacted = Degradation("CustomerRedacted", "upsr-order", until - 86400, until - 3600, 4, "")
    fix = deployer_mail([redacted], system="Upsell recommender", region="eu-west-2", zone="Europe/London")
    yield Document("upsr-degraded-fix", "mail", fix.html, ("Shopify customer redacted", "4 times"), text=fix.text)
    quiet = all_quiet("Upsell recommender", "No order was nudged, tapped or taken since the last roll-up.")
    yield Document("upsr-rollup-quiet", "mail", quiet.html, ("all quiet",), text=quiet.text)
    nudge = _upsr_email_nudge()
    yield Document("upsr-nudge-email", "mail", nudge.html, ("Ann", "Mat strap", SHOP), action=True, text=nudge.text)
    yield from upsr_tap_pages()


def upsr_tap_pages() -> Iterator[Document]:
    """What upsr-addlink answers a customer's browser when a tap cannot go to the cart: the
    real handler on an expired and on a cut link (neither reads upsr-offers)."""
    keys = Keyring.from_secret_string('{"active_kid": "k1", "keys": {"k1": "' + "s" * 40 + '"}}')
    deps = AddlinkDeps(offers=None, keyring=lambda: keys,  # type: ignore[arg-type]
                       store_domain="example-shop.myshopify.com", business=SHOP, website=SHOP_SITE)
    now = NOW.timestamp()
    old = issue_short_token(keys, subject=link_subject("ofr-5443254255890"), action=ADD_ACTION,
                            ttl_seconds=17 * 86400, now=now - 30 * 86400)
    accept = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8", "user-agent": "Mozilla/5.0 (iPhone)"}
    for name, token in (("upsr-tap-expired", old), ("upsr-tap-invalid", old[:12])):
        answer = taps.handle(Request("GET", accept, {}, b"", path=f"/{token}"), deps, now=now)
        yield Document(name, "page", answer["body"], (SHOP, f"Go to {SHOP}"), action=True,
                       status=answer["statusCode"])


def _upsr_email_nudge() -> Any:
    """The nudge to a customer who consented to email only, with its real one-tap link."""
    keys = Keyring.from_secret_string('{"active_kid": "k1", "keys": {"k1": "' + "s" * 40 + '"}}')
    token = issue_short_token(keys, subject=link_subject("ofr-5443254255890"), action=ADD_ACTION,
                              ttl_seconds=17 * 86400, now=NOW.timestamp())
    return compose(Contact(Channel.EMAIL, "ann.smith@example.org", "Ann"), "Mat strap",
                   "Keeps your new mat rolled tight", link_url(FUNCTION_URL, token), business=SHOP)


def upsr_sms() -> Iterator[Sms]:
    keys = Keyring.from_secret_string('{"active_kid": "k1", "keys": {"k1": "' + "s" * 40 + '"}}')
    token = issue_short_token(keys, subject=link_subject("ofr-5443254255890"), action=ADD_ACTION,
                              ttl_seconds=17 * 86400, now=NOW.timestamp())
    url = link_url(FUNCTION_URL, token)
    for name, first, title, line in (
        ("upsr-sms-short-title", "Ann", "Mat strap", "Keeps your new mat rolled tight"),
        ("upsr-sms-long-title", "Bartholomew",
         "Organic Cotton \u201cPremium\u201d Gift Wrap with a Handwritten Card \U0001f381", "It makes the present"),
        ("upsr-sms-no-name", "", "Yoga block", "Steadies the harder poses."),
    ):
        yield Sms(name, compose(Contact(Channel.SMS, "+447700900123", first), title, line, url,
                                business=SHOP).text)


# ler ------------------------------------------------------------------------------------------


def ler_entry(lead_id: str, reason: str, lane: str, fields: dict[str, str], message: str,
              **extra: Any) -> tuple[str, dict[str, Any]]:
    """A junk log entry as ``junk_log.junk_entry`` writes it, with its key."""
    key = f"junk/2026-08-02/{lead_id}.json"
    return key, {
        "lead_id": lead_id, "lane": lane, "reason": reason, "stage": "filter",
        "dropped_at": "2026-08-02T14:05:00+00:00",
        "lead": {"lead_id": lead_id, "lane": lane, "received_at": "2026-08-02T14:04:58+00:00",
                 "fields": fields, "message": message},
        **extra,
    }


def ler_documents() -> Iterator[Document]:
    zone = "Europe/London"
    priya = ler_entry(
        "f-3a1c", "many_links", "form",
        {"name": "Priya Raman-Whitfield", "email": "priya.raman-whitfield@fabrikam-engineering.example",
         "company": "Fabrikam Engineering Ltd", "phone": "+44 20 7946 0018"},
        "Hello, we would like a quote for the annual service of our three sites; details at "
        "https://fabrikam.example/sites, https://fabrikam.example/plan and www.fabrikam.example "
        "(the floor plans are on the second page).",
    )
    entries = [
        priya,
        ler_entry("f-77bd", "many_links", "form", {"name": "Mike Rank", "email": "outreach@rank-agency.example"},
                  "Get your site on the first page of Google! http://a.example https://b.example"),
        ler_entry("f-9e02", "honeypot", "form", {"email": "sales@growth-hackers.example"}, ""),
        ler_entry("m-41aa", "spam_phrases", "mail", {"name": "Tom Lee", "email": "tom@seo-wins.example"},
                  "We offer guest posts on high authority sites " * 6,
                  rescue={"by": "owner@example.com", "at": "2026-08-03T08:12:00+00:00"}),
    ]
    links = RescueLinks(lambda key: f"{FUNCTION_URL}rescue?t={_token(7)}", 14, zone)
    digest = summarise(dt.date(2026, 8, 2), entries, links=links).mail()
    yield Document("ler-digest", "mail", digest.html,
                   ("Priya Raman-Whitfield", "Mike Rank", "Rescued by owner@example.com"), text=digest.text)
    key, entry = priya
    dropped = rescue_pages.Dropped(key, "etag", entry)
    action = f"/rescue?t={_token(8)}"
    yield Document("ler-rescue-confirm", "page", rescue_pages.confirm(dropped, action, zone)["body"],
                   ("Priya Raman-Whitfield", "Fabrikam Engineering Ltd"), action=True)
    yield Document("ler-rescue-done", "page",
                   rescue_pages.done(dropped, "owner@example.com", "2026-08-03T08:12:00+00:00", zone)["body"],
                   ("Priya Raman-Whitfield", "owner@example.com"))
    browser = Request("GET", {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}, {}, b"")
    rescued = rescue_pages.Dropped(key, "etag", {**entry, "rescue": {"by": "owner@example.com",
                                                              "at": "2026-08-03T08:12:00+00:00"}})
    yield Document("ler-rescue-already", "page", rescue_pages.already(browser, rescued, zone)["body"],
                   ("Priya Raman-Whitfield", "owner@example.com"), status=409)
    yield Document("ler-rescue-expired", "page", rescue_pages.expired(browser)["body"], ("expired",), status=410)
    yield Document("ler-rescue-invalid", "page", rescue_pages.invalid(browser)["body"], ("not valid",), status=403)
    yield Document("ler-rescue-failed", "page", rescue_pages.failed(browser, dropped)["body"],
                   ("Priya Raman-Whitfield",), status=503)


# ls -------------------------------------------------------------------------------------------


def ls_report() -> Any:
    return Report(
        start=dt.date(2026, 11, 1), end=dt.date(2026, 11, 30), mode="strict", include_asked=False,
        enquiries=42,
        rules={
            "first_touch": RuleResult({"google": 14, "facebook": 7, "newsletter": 4, "bing": 2}, 15),
            "last_non_direct": RuleResult({"google": 16, "newsletter": 9, "facebook": 5}, 12),
        },
    )


LS_URL = "https://" + "l" * 32 + ".lambda-url.us-east-1.on.aws/"
LS_MONDAY = dt.datetime(2026, 11, 30, 7, 0, tzinfo=dt.UTC)
"""The weekly mail's run: Monday 30 November, so the week is 23 to 29 November."""
BROWSER = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def ls_week_store() -> Any:
    """A week of ls rows (``testsupport.ls.InMemoryStore``): per source a number of visitors
    who arrived from it and enquired, some who came back through a second source, and some
    seen only as direct visits (the unattributed)."""
    store = InMemoryStore()
    journeys: list[list[tuple[str, str, str]]] = (
        [[("google", "organic", "referrer")]] * 11
        + [[("google", "organic", "referrer"), ("newsletter", "email", "utm")]] * 3
        + [[("facebook", "cpc", "utm")]] * 4
        + [[("facebook", "cpc", "utm"), ("direct", "direct", "none")]] * 3
        + [[("newsletter", "email", "utm")]] * 4
        + [[("bing", "cpc", "utm")]] * 2
        + [[("direct", "direct", "none")]] * 15
    )
    for n, journey in enumerate(journeys):
        visitor = f"visitor{n:04d}" + "v" * 12
        day = dt.datetime(2026, 11, 23 + n % 7, 9, tzinfo=dt.UTC)
        for step, (source, medium, how) in enumerate(journey):
            at = (day + dt.timedelta(hours=step)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
            store.put_touch(Touch(visitor, at, source, medium, "", "", "/", how, 0))  # type: ignore[arg-type]
        at = (day + dt.timedelta(hours=len(journey))).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
        store.put_enquiry(Enquiry(at[:7], f"enq{n:04d}", at, visitor, f"{n:064x}", "", "/contact"), None)
    return store


def ls_documents() -> Iterator[Document]:
    """The weekly mail as ls-report sends it (a stand-in SES keeps it), the page its signed
    link opens on ls-report-page, and the page a cut copy of that link gets: every one made by
    the handlers' own code from one week of rows, so the link in the mail is the one checked."""
    keys = Keyring.from_secret_string('{"active_kid": "k1", "keys": {"k1": "' + "s" * 40 + '"}}')
    store = ls_week_store()
    sent: list[dict[str, Any]] = []

    class Ses:
        def send_email(self, **request: Any) -> dict[str, str]:
            sent.append(request["Content"]["Simple"])
            return {"MessageId": "gallery"}

    link = report_link.signer(LS_URL, keys, days=28, now=LS_MONDAY.timestamp())
    reports = InMemoryReports()
    keep = stored_report.keeper(reports, int(LS_MONDAY.timestamp()) + 28 * 86_400)
    report_mail.send_weekly(store, Ses(), sender="crm-bot@example.com", recipient="owner@example.com",
                            today=LS_MONDAY.date(), link=link, keep=keep)
    mail = sent[0]["Body"]
    [url] = re.findall(r"https://\S+/report\?t=\S+", mail["Text"]["Data"])  # the link sent

    def opened(target: str, at: dt.datetime, views: int = 100) -> dict[str, Any]:
        parts = urlsplit(target)
        event = {"rawPath": parts.path, "headers": BROWSER,
                 "queryStringParameters": {k: v[-1] for k, v in parse_qs(parts.query).items()},
                 "requestContext": {"http": {"method": "GET"}}}
        return WeekPage(store, lambda: keys, reports, views, clock=lambda: at)(Request.read(event))

    names = ("Not known (unattributed)", "google", "newsletter", "facebook")
    yield Document("ls-report-mail", "mail", mail["Html"]["Data"], names, action=True,
                   text=mail["Text"]["Data"], opens=((url, "ls-report-page.html"),))
    page = opened(url, LS_MONDAY + dt.timedelta(days=2))
    yield Document("ls-report-page", "page", page["body"], names, status=page["statusCode"])
    cut = opened(url[:-5], LS_MONDAY + dt.timedelta(days=2))
    yield Document("ls-report-link-refused", "page", cut["body"], ("weekly mail",), status=cut["statusCode"])
    late = opened(url, LS_MONDAY + dt.timedelta(days=28))
    yield Document("ls-report-link-expired", "page", late["body"], ("latest weekly mail",), status=late["statusCode"])
    used_up = opened(url, LS_MONDAY + dt.timedelta(days=3), views=1)  # opened once already
    yield Document("ls-report-link-used-up", "page", used_up["body"], ("next weekly mail",),
                   status=used_up["statusCode"])


# rrs ------------------------------------------------------------------------------------------


def rrs_documents() -> Iterator[Document]:
    """The owner's handover of an unhappy customer who also wrote private feedback."""
    mail = handover.build(
        reason="private_feedback",
        request_id="req-5f1c0a9e2b7d4c3a8e6f1b0d9c2a7e4f",
        request={"customer_id": "c-7", "completion_id": "done-3", "state": "asked", "channel": "sms",
                 "signal": {"rating": 2, "notes": "Arrived two hours late; radiator in the hall still cold",
                            "complaint": True, "prior_sentiment": "neutral", "past_complaints": 1}},
        customer={"name": "Ann Smith", "email": "ann.smith@longer-domain-name-example.org",
                  "phone": "+44 7700 900123"},
        job={"job_title": "Boiler service and radiator bleed", "completed_at": "2026-07-01T15:30:00Z"},
        trail=[
            {"event": "grade", "at": "2026-07-01T16:00:00Z",
             "facts": {"band": "unhappy", "source": "model", "reasons": ["late arrival", "heating still faulty"]}},
            {"event": "escalation_sent", "at": "2026-07-01T16:01:00Z"},
            {"event": "feedback", "at": "2026-07-02T08:00:00Z",
             "facts": {"submitted_at": "2026-07-02T08:00:00Z", "rating": 2,
                       "text": "Late again.\nThe hall radiator is still cold and nobody called back."}},
        ],
        business="Acme Heating",
        zone="Europe/London",
    )
    yield Document("rrs-handover", "mail", mail.html, ("Ann Smith", "Boiler service", "still cold"),
                   action=True, text=mail.text)
    yield rrs_unconfirmed_handover()
    yield from rrs_degraded_notices()
    yield from rrs_ask_documents()


def rrs_asks() -> Iterator[tuple[str, drafting.DraftRequest, str, str, str]]:
    """(name, request, subject, text, html) of the four asks rrs-sender can send: the fixed
    template (what goes out whenever a draft is refused), the link exactly as rrs-sender makes it."""
    keys = Keyring.from_secret_string('{"active_kid": "k1", "keys": {"k1": "' + "s" * 40 + '"}}')
    ref = feedback_ref(keys, request_id_for("done-3"), dt.timedelta(days=30), NOW)
    for purpose, link in ((Purpose.REVIEW, REVIEW_URL), (Purpose.FEEDBACK, feedback_link(FEEDBACK_URL, ref))):
        for channel in (Channel.EMAIL, Channel.SMS):
            request = drafting.DraftRequest("Ann", TRADE, "boiler service", RrsChannel(channel.value), purpose)
            subject, text, html = drafting.finish(drafting.template(request), request, link)
            yield f"rrs-ask-{purpose.value}-{channel.value}", request, subject, text, html


def rrs_ask_documents() -> Iterator[Document]:
    for name, _, _, text, html in rrs_asks():
        if html:
            yield Document(name, "mail", html, ("Ann", TRADE), action=True, text=text)


def rrs_sms() -> Iterator[Sms]:
    """rrs asks by SMS: measured in GSM-7 segments, not held to one (a drafted ask runs to 200
    characters of words before its link)."""
    for name, _, _, text, html in rrs_asks():
        if not html:
            yield Sms(name, text)


def customer_messages() -> list[CustomerMessage]:
    """Every message a customer receives (upsr nudges, rrs asks), with the From it is sent from."""
    shop_from = from_address(SHOP, SHOP_EMAIL)
    nudge = _upsr_email_nudge()
    found = [CustomerMessage("upsr-nudge-email", SHOP, "email", nudge.text, nudge.html, shop_from)]
    found += [CustomerMessage(m.name, SHOP, "sms", m.text) for m in upsr_sms()]
    for name, request, _, text, html in rrs_asks():
        sender = from_address(TRADE, TRADE_EMAIL) if html else ""
        found.append(CustomerMessage(name, request.business, "email" if html else "sms", text, html, sender))
    return found


def rrs_unconfirmed_handover() -> Document:
    """An ask claimed and never confirmed sent, for a customer since gone from the sheet: the
    address comes from rrs-audit."""
    mail = handover.build(
        reason="unconfirmed_send",
        request_id="req-0b9d7e4f2a1c5e8b3d6f9a0c7e2b4d1f",
        request={"customer_id": "c-9", "customer_name": "Bob Jones", "state": "asked", "channel": "email",
                 "sent_at": "2026-08-03T08:15:00Z"},
        customer=None,
        job={"job_title": "Annual gas safety check", "completed_at": "2026-08-02T14:00:00Z"},
        trail=[{"event": "message", "at": "2026-08-03T08:15:00Z",
                "facts": {"channel": "email", "to": "bob.jones@example.net", "subject": "How did we do, Bob?",
                          "text": "Hi Bob, thanks for choosing Acme Heating for your gas safety check."}}],
        business="Acme Heating",
        zone="Europe/London",
    )
    return Document("rrs-handover-unconfirmed", "mail", mail.html, ("Bob Jones", "bob.jones@example.net"),
                    action=True, text=mail.text)


def rrs_degraded_notices() -> Iterator[Document]:
    """Bedrock refuses rrs-sender's model (rrs-escalator): the fix to whoever deployed the
    stack, what it changes to the owner."""
    until = int(NOW.timestamp())
    refused = Degradation("ModelRefused", "rrs-sender", until - 2 * 86400 - 5400, until - 600, 37,
                          "global.anthropic.claude-haiku-4-5-20251001-v1:0")
    fix = notice.for_deployer([refused], business="Acme Heating", zone="Europe/London", region="eu-west-2")
    yield Document("rrs-degraded-fix", "mail", fix.html,
                   ("Model refused", "claude-haiku-4-5", "37 times", "Model catalog in eu-west-2"),
                   action=True, text=fix.text)
    mail = notice.build([refused], business="Acme Heating", zone="Europe/London", alert_email="ops@example.org")
    yield Document("rrs-degraded-notice", "mail", mail.html,
                   ("standard wording", "ops@example.org"), text=mail.text)


SYSTEMS: dict[str, Callable[[], Iterator[Document]]] = {
    "dm": dm_documents,
    "upsr": upsr_documents,
    "ler": ler_documents,
    "ls": ls_documents,
    "rrs": rrs_documents,
}


def documents() -> list[Document]:
    return [doc for make in SYSTEMS.values() for doc in make()]


def sms() -> list[Sms]:
    """Every SMS that must fit one GSM-7 segment (rrs asks are listed apart: ``rrs_sms``)."""
    return [*upsr_sms()]


def segments(text: str) -> str:
    """How a carrier bills ``text``: GSM-7 segments (153 septets each when split), or UCS-2."""
    septets = sms_kit.gsm7_septets(text)
    if septets is None:
        return "UCS-2"
    count = 1 if septets <= sms_kit.SEGMENT else -(-septets // 153)
    return f"{count} GSM-7 segment{'s' if count > 1 else ''}"


def write(folder: str, *, shots: bool = True) -> list[str]:
    """Every document as ``<name>.html`` (and ``.txt`` for a mail's plain part), each SMS as
    ``<name>.txt``, with phone and full-page desktop screenshots, and an ``index.html``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    docs = documents()
    written: list[str] = []
    rows = []
    for doc in docs:
        html = doc.html
        for link, target in doc.opens:
            html = html.replace(str(kit.esc(link)), target)
        (out / f"{doc.name}.html").write_text(html, encoding="utf-8")
        written.append(f"{doc.name}.html")
        extra = ""
        if doc.text is not None:
            (out / f"{doc.name}.txt").write_text(doc.text, encoding="utf-8")
            extra = f" · {kit.link(doc.name + '.txt', 'plain-text part')}"
        rows.append(f"<li>{kit.link(doc.name + '.html', doc.name)} ({doc.kind}){extra}</li>")
    for message in [*sms(), *rrs_sms()]:
        (out / f"{message.name}.txt").write_text(message.text + "\n", encoding="utf-8")
        rows.append(f"<li>{kit.link(message.name + '.txt', message.name)} (SMS, {len(message.text)} characters, "
                    f"{segments(message.text)})</li>")
    senders = {m.name: m.sender for m in customer_messages() if m.sender}
    for name, sender in senders.items():  # what the customer's mail app shows as the sender
        (out / f"{name}.from.txt").write_text(f"From: {sender}\n", encoding="utf-8")
    if shots:
        with headless_browser() as b:
            for doc in docs:
                for label, size in (("phone", PHONE), ("desktop", DESKTOP)):
                    seen = b.render(doc.html, size, screenshot=True, full=True)
                    (out / f"{doc.name}-{label}.png").write_bytes(seen.png or b"")
                    written.append(f"{doc.name}-{label}.png")
    index = kit.page("Every page and mail", kit.Html("<ul>" + "".join(rows) + "</ul>"))["body"]
    (out / "index.html").write_text(index, encoding="utf-8")
    return written


if __name__ == "__main__":
    import sys

    from testsupport import tools

    target = sys.argv[1] if len(sys.argv) > 1 else "build/see"
    try:
        shots = bool(tools.browser())
    except tools.ToolMissing as missing:  # every page, mail and SMS is still written
        print(f"screenshots skipped: {missing}")
        shots = False
    names = write(target, shots=shots)
    print(f"{len(names)} files written to {target}/ (open {target}/index.html)")
