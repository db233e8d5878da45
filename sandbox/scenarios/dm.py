"""Duplicate contact merger: a week of contacts, the Monday run, a confirm and an undo.

The CRM is ``testsupport.dm.InMemoryCrm`` holding a synthetic week of contacts
(``testsupport.crm_generator.generate``) plus two records of one person, given to dm-block and
dm-merge in place of HubSpot as the ``crm`` their ``wire`` takes (``entry.registry.override``). The weekly schedule fires dm-block; its blocks go to dm-score over the
SQS block queue; automatic-band pairs go to dm-merge over the merge queue; the weekly digest
mails the reviewer signed links to the local Function URL (dm-merge asks Lambda for its own
URL, which the sandbox answers with the local one). The reviewer opens a proposal, confirms
it, then undoes the merge from the link on the confirmation page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from sandbox.core import HttpAnswer, Sandbox
from sandbox.report import Report

LINK_KEYRING = json.dumps({"active_kid": "k1", "keys": {"k1": "sandbox-dm-link-key-" + "d" * 24}})
BROWSER = {"user-agent": "Mozilla/5.0 (Windows NT 10.0) Firefox/140.0",
           "accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def _crm() -> Any:
    # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
    from handlers.duplicate_merger.crm import Association
    from testsupport.crm_generator import generate
    from testsupport.dm import InMemoryCrm

    crm = InMemoryCrm()
    crm.add_contact(
        "101",
        firstname="Ann",
        lastname="Zyborski",
        email="ann.zyborski@acme.io",
        phone="(415) 555-0101",
        company="Acme",
        createdate="2024-01-01",
    )
    crm.add_contact(
        "102",
        firstname="Ann",
        lastname="Zyborski",
        email="ann.zyborski@acme.io",
        phone="415.555.0101",
        city="Boston",
        createdate="2025-03-01",
    )
    crm.add_related("101", Association("deals", "d1", 4), dealname="Renewal")
    crm.add_related("102", Association("companies", "c1", 279), name="Acme")
    crm.add_related("102", Association("notes", "n1", 201), hs_note_body="Asked for a quote")
    crm.add_related("102", Association("calls", "k1", 193), hs_call_title="Intro call")
    crm.add_contact("301", firstname="Zed", lastname="Quarrington", email="zq@one.io", city="Tulsa")
    crm.add_contact(
        "302", firstname="Zed", lastname="Quarington", email="zed.q@two.io", city="Tulsa"
    )
    for number, (_, props) in enumerate(generate(300, seed=11, duplicate_rate=0.05).contacts):
        crm.add_contact(str(500_000 + number), **props)
    return crm


def _follow(sb: Sandbox, url: str, method: str) -> HttpAnswer:
    parts = urlsplit(url.replace("&amp;", "&"))
    return sb.http("dm-merge", method, f"{parts.path}?{parts.query}", headers=BROWSER)


class DuplicateMergerDay:
    key = "dm"
    title = "Duplicate contact merger"

    def __init__(self, crm: Callable[[], Any] = _crm) -> None:
        self.make_crm = crm
        """Builds the CRM the day runs on (called in ``prepare``: the run's own modules)."""
        self.crm: Any = None

    def prepare(self, sb: Sandbox) -> None:
        # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
        from handlers.common.entry import registry
        from handlers.duplicate_merger.functions import block, merge

        sb.set_secret("dm-crm-read", "sandbox-crm-read-token")
        sb.set_secret("dm-crm-write", "sandbox-crm-write-token")
        sb.set_secret("dm-link-key", LINK_KEYRING)
        self.crm = self.make_crm()
        registry.override(block, crm=lambda deadline: self.crm)
        registry.override(merge, crm=lambda: self.crm)

    def play(self, sb: Sandbox, report: Report) -> None:
        contacts = len(self.crm.contacts)
        with report.step(f"Monday 06:00: dm-block reads the week's {contacts} contacts") as step:
            sb.fire("dm-block-weekly")
            sb.drain()
            pairs = sb.items("dm-pairs")
            bands: dict[str, int] = {}
            for pair in pairs:
                bands[str(pair.get("band"))] = bands.get(str(pair.get("band")), 0) + 1
            step.state("dm-pairs by band", bands)
            step.state("archived by automatic merges", sorted(self.crm.archived))
            kept = sorted(f"{a.type}/{a.id}" for a in self.crm.links.get("101", set()))
            step.state("contact 101's associations", kept)
        report.check(
            "blocking and scoring found pairs; the certain one merged automatically",
            bool(pairs) and "102" in self.crm.archived,
            f"{len(pairs)} pairs",
        )
        report.check(
            "the absorbed record's note and call moved to the kept contact",
            {"notes/n1", "calls/k1", "companies/c1"} <= set(kept) and not self.crm.links.get("102"),
            ", ".join(kept),
        )
        with report.step("The weekly digest mails the reviewer") as step:
            sb.fire("dm-digest-weekly")
            sb.drain()
            reviewer = (
                sb.graph.config.systems.dm.reviewer_email if sb.graph.config.systems.dm else ""
            )
            digests = [m for m in sb.outbox.to(reviewer) if m.function == sb.name("dm-merge")]
            links = re.findall(
                r"https?://\S+/review\?t=[\w.\-]+", digests[-1].text if digests else ""
            )
            step.note(f"{len(links)} proposal link(s) in the digest")
        report.check(
            "the digest went to the reviewer with signed proposal links",
            bool(digests) and bool(links),
            digests[-1].subject if digests else "no digest",
        )
        with report.step("The reviewer opens a proposal and confirms it") as step:
            page = _follow(sb, links[0], "GET") if links else None
            confirm = re.search(r"action='([^']*/confirm\?t=[^']+)'", page.text) if page else None
            step.note(f"proposal page: HTTP {page.status if page else '-'}")
            done = _follow(sb, confirm.group(1), "POST") if confirm else None
            step.note(f"confirm: HTTP {done.status if done else '-'}")
            again = _follow(sb, confirm.group(1), "POST") if confirm else None
            step.note(f"the same link again: HTTP {again.status if again else '-'}")
            sb.drain()  # the click was claimed and queued: dm-merge merges it from dm-merges
            result = _follow(sb, confirm.group(1), "GET") if confirm else None
            step.note(f"the result (the same link, opened): HTTP {result.status if result else '-'}")
        merged = [m for m in sb.items("dm-merges") if str(m.get("merge_id", "")).startswith("mrg")]
        report.check(
            "the confirmed merge ran once, after the answer; the reused link changed nothing",
            done is not None
            and done.status == 202
            and again is not None
            and again.status == 409
            and result is not None
            and "were already merged by" in result.text
            and len(merged) >= 2,
            f"{len(merged)} merges",
        )
        with report.step("The reviewer undoes that merge from the result page") as step:
            offer = re.search(r"href='([^']*/undo\?t=[^']+)'", result.text) if result else None
            page = _follow(sb, offer.group(1), "GET") if offer else None
            undo = re.search(r"action='([^']*/undo\?t=[^']+)'", page.text) if page else None
            undone = _follow(sb, undo.group(1), "POST") if undo else None
            step.note(f"undo: HTTP {undone.status if undone else '-'}")
            sb.drain()
            after = _follow(sb, undo.group(1), "GET") if undo else None
        bundles = sb.objects("dm-undo", "undo/")
        report.check(
            "the undo restored the absorbed record; every merge left an undo bundle",
            undone is not None and undone.status == 202 and after is not None
            and "both contacts are back" in after.text and len(bundles) >= len(merged),
            f"{len(bundles)} bundle(s)",
        )
        report.check(
            "no call was denied",
            not [d for d in sb.denials() if (d.function or "").startswith(sb.name("dm-"))],
        )


SCENARIO = DuplicateMergerDay()
