"""One person through all five systems: the same name, email and phone everywhere.

Each system's scripted day has its own people; a request to erase someone (``make forget``)
is about one person who may have met every system. This journey walks one such person
through the five with the days' own steps and stand-ins (``sandbox/scenarios/<key>.py``):
their CRM record and its duplicate, proposed in the digest, merged by the reviewer, then
undone (dm); a lead by the web form, one by mail, and an autofilled try dropped as junk (ler);
a tent order and its SMS nudge (upsr); a completed job, its review ask, then an opt-out (rrs);
a visit from a search and an enquiry (ls). ``tests/sandbox/test_forget.py`` erases them and
scans everything the stack holds. It is not a system's day (``scenarios.load`` does not list
it); it is played with a ``Report`` like one.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from sandbox.core import Sandbox, mime_message
from sandbox.report import Report
from sandbox.scenarios.dm import DuplicateMergerDay
from sandbox.scenarios.dm import _follow as dm_follow
from sandbox.scenarios.ler import LeadEnricherDay
from sandbox.scenarios.ls import SITE, LeadSourceDay
from sandbox.scenarios.rrs import SHEET, ReviewDay, requests
from sandbox.scenarios.upsr import UpsellDay, _order

TITLE = "One person through all five systems"


@dataclass(frozen=True)
class Someone:
    """The one person, as each system meets them."""

    first: str = "Rosalind"
    last: str = "Achterberg"
    email: str = "rosalind.achterberg@quillon-joinery.co.uk"
    phone: str = "+447700900456"
    national_phone: str = "07700 900456"
    company: str = "Quillon Joinery Ltd"
    shop_customer: int = 7_301_845_209_113
    """Shopify's ids are 13 digits: a short one would be too common to scan for."""
    sheet_customer: str = "c-ros"

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"


class OnePerson:
    """The journey: ``prepare`` sets the five systems up (the days' own ``prepare``), ``play``
    walks the person through them, checking each system kept them."""

    key = "person"
    title = TITLE

    def __init__(self, person: Someone | None = None) -> None:
        self.person = person or Someone()
        self.dm = DuplicateMergerDay(crm=self._crm)
        self.ler = LeadEnricherDay()
        self.upsr = UpsellDay()
        self.rrs = ReviewDay(sheet=self._sheet())
        self.ls = LeadSourceDay()
        self.orders = 0

    def _crm(self) -> Any:
        # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
        from testsupport.crm_generator import generate
        from testsupport.dm import InMemoryCrm

        p, crm = self.person, InMemoryCrm()
        # the same person twice, as a form and a sales call left them: dm proposes the merge
        crm.add_contact("201", firstname=p.first, lastname=p.last, email=p.email,
                        phone=f"+44 {p.national_phone[1:]}", company=p.company, createdate="2024-02-01")
        crm.add_contact("202", firstname=p.first, lastname=p.last, email=p.email.upper(),
                        phone=p.phone, city="Leeds", createdate="2025-06-01")
        for number, (_, props) in enumerate(generate(60, seed=11, duplicate_rate=0.05).contacts):
            crm.add_contact(str(500_000 + number), **props)
        return crm

    def _sheet(self) -> str:
        p = self.person
        return SHEET + f"{p.sheet_customer},{p.name},{p.email},{p.phone},Europe/London,email,positive,0\n"

    def prepare(self, sb: Sandbox) -> None:
        for day in (self.dm, self.ler, self.upsr, self.rrs, self.ls):
            day.prepare(sb)

    def play(self, sb: Sandbox, report: Report) -> None:
        self._dm(sb, report)
        self._ler(sb, report)
        self._order_and_job(sb, report)
        self._ls(sb, report)

    # dm: a duplicate merged and undone -------------------------------------------------------

    def _dm(self, sb: Sandbox, report: Report) -> None:
        p = self.person
        with report.step(f"dm-block pairs {p.name}'s two records; the digest proposes the merge") as step:
            sb.fire("dm-block-weekly")
            sb.drain()
            sb.fire("dm-digest-weekly")
            sb.drain()
            reviewer = sb.graph.config.systems.dm.reviewer_email if sb.graph.config.systems.dm else ""
            text = "\n".join(m.text for m in sb.outbox.to(reviewer) if m.function == sb.name("dm-merge"))
            block = next((b for b in text.split("\n\n") if p.name in b and "/review?t=" in b), "")
            link = re.search(r"https?://\S+/review\?t=[\w.\-]+", block)
            step.note(f"proposal link: {'yes' if link else 'none'}")
        with report.step("The reviewer confirms the merge, then undoes it") as step:
            page = dm_follow(sb, link.group(0), "GET") if link else None
            confirm = re.search(r"action='([^']*/confirm\?t=[^']+)'", page.text) if page else None
            done = dm_follow(sb, confirm.group(1), "POST") if confirm else None
            sb.drain()  # the click was claimed and queued: dm-merge merges it from dm-merges
            merged = "202" in self.dm.crm.archived or "201" in self.dm.crm.archived
            result = dm_follow(sb, confirm.group(1), "GET") if confirm else None
            offer = re.search(r"href='([^']*/undo\?t=[^']+)'", result.text) if result else None
            offered = dm_follow(sb, offer.group(1), "GET") if offer else None
            undo = re.search(r"action='([^']*/undo\?t=[^']+)'", offered.text) if offered else None
            undone = dm_follow(sb, undo.group(1), "POST") if undo else None
            sb.drain()
            step.note(f"confirm: HTTP {done.status if done else '-'}; undo: HTTP {undone.status if undone else '-'}")
        report.check("the merge ran, and the undo brought both records back",
                     merged and undone is not None and undone.status == 202
                     and {"201", "202"} <= set(self.dm.crm.contacts) and not {"201", "202"} & set(self.dm.crm.archived))

    # ler: a lead by form and by mail ---------------------------------------------------------

    def lead_by_form(self, sb: Sandbox, message: str) -> int:
        p = self.person
        form = {"email": p.email, "name": p.name.lower(), "phone": p.national_phone,
                "company": p.company, "message": message}
        return self.ler._post(sb, form)

    def _ler(self, sb: Sandbox, report: Report) -> None:
        p = self.person
        with report.step(f"{p.first} fills in the web form, then emails the inbound address") as step:
            status = self.lead_by_form(sb, "A quote for oak stairs, please")
            # a first try their browser's autofill sent with the hidden field filled: a bot's
            self.ler._post(sb, {"email": p.email, "name": p.name, "_gotcha": p.company})
            sb.drain()
            inbound = sb.graph.config.systems.ler.inbound_address if sb.graph.config.systems.ler else ""
            text = f"Hello,\n\nFollowing up on my form.\n\nPhone: {p.national_phone}\nCompany: {p.company}\n"
            mime = mime_message(f"{p.name} <{p.email}>", inbound, "Oak stairs", text)
            step.note(f"form HTTP {status}; mail stored {sb.drop_mail(mime, recipient=inbound)[0]}")
            sb.drain()
        created = [c for c in self.ler._created() if c == p.email]
        report.check("both leads reached the CRM as one contact; the autofilled one was dropped",
                     created == [p.email] and any(p.email in json.dumps(j) for j in self.ler._junk(sb)),
                     str(created))

    # upsr and rrs: an order and its nudge, a job and its review ask ----------------------------

    def order(self, sb: Sandbox) -> int:
        """The person orders a tent (a new order id each time); the webhook's HTTP status."""
        p = self.person
        self.orders += 1
        buyer = {"id": p.shop_customer, "first_name": p.first, "last_name": p.last,
                 "email": p.email, "phone": p.phone}
        created = sb.clock.now() - dt.timedelta(minutes=1)
        return self.upsr._webhook(sb, _order(5_912_334_001_000 + self.orders, created, buyer))

    def job_done(self, sb: Sandbox, completion: str) -> int:
        """A job for the person completes, rated 5; the webhook's HTTP status."""
        event = self.rrs._completion(sb, completion, self.person.sheet_customer, 5, "Stairs fitted, very happy")
        return self.rrs._event(sb, event)

    def _order_and_job(self, sb: Sandbox, report: Report) -> None:
        p = self.person
        with report.step(f"{p.first} orders a tent; the sheet syncs and a job of theirs completes"):
            sb.fire("upsr-catalog-sync")
            sb.fire("rrs-sync")
            sb.drain()
            order, job = self.order(sb), self.job_done(sb, "cmp-ros")
            sb.drain()
        with report.step("Two hours pass: the nudge and the review ask go out; then they opt out") as step:
            sb.advance(hours=2, minutes=10)
            sb.drain()
            opted = self.rrs._event(sb, {"type": "contact.opted_out", "id": "evt-opt-ros", "contact": p.email})
            sb.drain()
            step.note(f"order HTTP {order}, job HTTP {job}, opt-out HTTP {opted}")
        nudges = [m for m in sb.outbox.messages if m.channel == "sms" and p.phone in m.to]
        asks = sb.outbox.to(p.email)
        report.check("one SMS nudge and one review ask", len(nudges) == 1 and len(asks) == 1,
                     f"{len(nudges)} nudge(s), {len(asks)} ask(s)")
        report.check("rrs asked them, then keeps their opt-out",
                     requests(sb).get(p.sheet_customer) in {"sent", "asked"}
                     and any(o.get("contact") == p.email for o in sb.items("rrs-optout")),
                     str(requests(sb).get(p.sheet_customer)))

    # ls: a visit and an enquiry --------------------------------------------------------------

    def _ls(self, sb: Sandbox, report: Report) -> None:
        p = self.person
        with report.step(f"{p.first} arrives from a search, then enquires"):
            visit = self.ls._beacon(sb, {"kind": "arrival", "url": f"{SITE}/pricing",
                                         "referrer": "https://www.google.com/"})
            visitor = visit.json()["visitor_id"]
            enquiry = {"kind": "enquiry", "url": f"{SITE}/contact", "email": p.email,
                       "heard_about": "", "submission_id": "form-ros-0001"}
            self.ls._beacon(sb, enquiry, cookie=visitor)
            sb.drain()
        report.check("ls kept the visit and the enquiry",
                     any(i.get("visitor_id") == visitor for i in sb.items("ls-identities"))
                     and len(sb.items("ls-enquiries")) == 1)
