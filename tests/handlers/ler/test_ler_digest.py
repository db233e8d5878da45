"""ler-digest: yesterday's drops by reason, in words; nothing on a quiet day but Monday's line."""

from __future__ import annotations

import datetime as dt

import pytest

from handlers.common.entry import registry
from handlers.lead_enricher.functions import digest, junk_writer
from tests.handlers.ler.conftest import (
    Ler,
    context,
    event,
    junk_lead,
)


def test_the_digest_counts_yesterdays_drops_by_reason(ler: Ler) -> None:
    for lead_id, reason in (("f-1", "honeypot"), ("f-2", "honeypot"), ("f-3", "many_links")):
        junk_writer.handler(event("le.junk", junk_lead(lead_id, reason)), context())
    junk_writer.handler(
        event("le.junk", junk_lead("f-4", "honeypot", "2026-11-28T00:01:00+00:00")), context()
    )
    summary = digest.handler({"day": "2026-11-28"}, context())
    assert summary == {
        "day": "2026-11-27",
        "total": 3,
        "by_reason": {"honeypot": 2, "many_links": 1},
    }
    [mail] = ler.sent_mail()
    assert mail.source == "crm-bot@example.com"
    assert mail.subject == "Lead enricher: 3 junk leads dropped on Fri 27 Nov 2026"
    assert "Filled in the hidden anti-robot field (honeypot): 2</h2>" in mail.body  # the HTML part
    assert "<strong>f-1@spam.example</strong>, by web form" in mail.body
    assert "junk/2026-11-27/" in mail.body


def test_the_digest_text_part_names_every_reason_in_words_and_cuts_no_line_mid_word() -> None:

    from handlers.lead_enricher.junk_digest import summarise

    long = "We offer guest posts on high authority sites " * 10
    entries = [
        ("junk/2026-11-27/f-1.json",
         {"reason": "honeypot", "lane": "form", "lead": {"fields": {"email": "f-1@spam.example"},
                                                          "message": "Buy backlinks now"}}),
        ("junk/2026-11-27/m-2.json",
         {"reason": "spam_phrases", "lane": "mail", "lead": {"contact": {"email": "seo@agency.example"},
                                                              "message": long}}),
    ]
    text = summarise(dt.date(2026, 11, 27), entries).text()
    lines = text.splitlines()
    assert lines[2:4] == [
        "Filled in the hidden anti-robot field (honeypot): 1",
        '  - f-1@spam.example, by web form: "Buy backlinks now"',
    ]
    [cut] = [line for line in lines if "seo@agency.example" in line]
    assert cut.endswith('posts on..."') and len(cut) < 220  # whole words only


def test_a_quiet_day_sends_nothing(ler: Ler) -> None:
    """#40: "0 junk leads dropped" every day is a mail that says nothing."""
    for today in ("2026-11-24", "2026-11-28", "2026-11-29"):  # Tuesday, Saturday, Sunday
        assert digest.handler({"day": today}, context())["total"] == 0
    assert ler.sent_mail() == []


def test_a_quiet_monday_gets_the_weeks_one_all_quiet_line(ler: Ler) -> None:
    assert digest.handler({"day": "2026-11-30"}, context())["total"] == 0
    [mail] = ler.sent_mail()
    assert mail.subject == "Lead enricher: all quiet"
    assert "No junk lead was dropped on Sun 29 Nov 2026." in mail.body


def test_quiet_report_none_sends_nothing_on_a_quiet_monday(ler: Ler, monkeypatch: pytest.MonkeyPatch) -> None:
    from handlers.common import settings

    monkeypatch.setenv("QUIET_REPORT", "none")
    settings.reset()
    registry.clear(digest)
    assert digest.handler({"day": "2026-11-30"}, context())["total"] == 0
    assert ler.sent_mail() == []
