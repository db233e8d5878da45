"""Every page and mail a person reads, in a real headless Chromium at phone and desktop size.

At 390x844 and 1280x900: nothing wider than the screen, the main action in the first screen,
the people named, no raw JSON, no "bits" on a line the owner reads (only in ``.detail``), the
language set, links that say what they do; a mail has a plain-text part that names the same
people. Every SMS fits one GSM-7 segment with a Function URL as long as a real one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from handlers.common import sms as sms_kit
from testsupport import gallery, tools
from testsupport.browser import DESKTOP, PHONE, Browser, Rendering, browser

DOCUMENTS = gallery.documents()
BITS = re.compile(r"\bbits?\b", re.IGNORECASE)
RUN_NAME = re.compile(r"\b\d{4}-W\d{2}\b")
"""A run's ISO-week name ("2026-W32"): for logs and detail lines, not for the owner."""
VAGUE_LINKS = {"here", "click here", "link", "this link", "more", "open", "undo"}


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    try:
        tools.browser()
    except tools.ToolMissing as missing:
        tools.skip_or_fail("browser checks", missing)
    with browser() as b:
        yield b


def looks_like_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


def problems(doc: gallery.Document, seen: Rendering) -> list[str]:
    where = f"{doc.name} at {seen.width}x{seen.height}"
    found = []
    if seen.lang != "en":
        found.append(f"{where}: no lang on <html>")
    if seen.inner_width != seen.width:
        found.append(f"{where}: laid out {seen.inner_width} px wide (no viewport meta?)")
    if seen.scroll_width > seen.width:
        found.append(f"{where}: {seen.scroll_width} px wide, wider than the screen")
    if doc.action:
        if not seen.primary:
            found.append(f"{where}: no main action")
        elif seen.primary[0]["bottom"] > seen.inner_height:
            found.append(f"{where}: main action {seen.primary[0]['text']!r} below the first screen "
                         f"(bottom {seen.primary[0]['bottom']:.0f} > {seen.inner_height})")
    for name in doc.names:
        if name not in seen.text:
            found.append(f"{where}: {name!r} not named")
    if looks_like_json(seen.text) or '{"error"' in seen.text:
        found.append(f"{where}: raw JSON")
    if BITS.search(seen.owner_text):
        found.append(f"{where}: 'bits' on an owner-facing line")
    if RUN_NAME.search(seen.owner_text):
        found.append(f"{where}: a run name like 'W32' on an owner-facing line")
    for text in seen.links:
        if text.lower() in VAGUE_LINKS or text.startswith(("http://", "https://")):
            found.append(f"{where}: a link says {text!r}, not what it does")
    return found


@pytest.mark.parametrize("doc", DOCUMENTS, ids=[d.name for d in DOCUMENTS])
def test_a_person_reads_it_on_a_phone_and_a_desktop(chromium: Browser, doc: gallery.Document) -> None:
    found = [p for size in (PHONE, DESKTOP) for p in problems(doc, chromium.render(doc.html, size))]
    assert not found, "\n".join(found)


MAILS = [d for d in DOCUMENTS if d.kind == "mail"]


@pytest.mark.parametrize("doc", MAILS, ids=[d.name for d in MAILS])
def test_every_mail_has_a_plain_text_part_that_names_them_too(doc: gallery.Document) -> None:
    assert doc.text and doc.text.strip()
    missing = [n for n in doc.names if n not in doc.text]
    assert not missing, missing
    owner_lines = [line for line in doc.text.splitlines() if not line.strip().startswith("Detail:")]
    assert not [line for line in owner_lines if BITS.search(line) or RUN_NAME.search(line)]


SMS = gallery.sms()


@pytest.mark.parametrize("message", SMS, ids=[m.name for m in SMS])
def test_every_sms_fits_one_gsm7_segment_with_a_real_function_url(message: gallery.Sms) -> None:
    assert gallery.FUNCTION_URL.split("/")[2] in message.text  # measured with the real length
    septets = sms_kit.gsm7_septets(message.text)
    assert septets is not None, f"{message.name} has a character outside GSM-7 (UCS-2: 70 a segment)"
    assert septets <= sms_kit.SEGMENT, f"{message.name}: {septets} septets > {sms_kit.SEGMENT}"


def test_the_checks_catch_what_they_look_for(chromium: Browser) -> None:
    """A wide table, a button below the fold, a missing name, raw JSON and bits: each caught."""
    from handlers.common import html_kit as kit

    filler = kit.join(kit.para("A line of text. " * 8) for _ in range(40))
    bad = kit.page("Checks", kit.join((
        kit.Html("<pre>" + "x" * 120 + "</pre>"), kit.para("score +9.8 bits"), kit.para("Run 2026-W32"), filler,
        kit.actions(kit.button("https://x.test/confirm", "Confirm", primary=True)),
    )))["body"]
    doc = gallery.Document("bad", "page", bad, ("Wanda Williams",), action=True)
    found = "\n".join(problems(doc, chromium.render(bad, PHONE)))
    for expected in ("wider than the screen", "below the first screen", "not named", "'bits'", "W32"):
        assert expected in found, found
    raw = gallery.Document("json", "page", '{"error": {"code": "link_used"}}', ())
    assert any("raw JSON" in p for p in problems(raw, chromium.render(raw.html, PHONE)))


def test_the_ls_mails_link_opens_its_page_and_a_bad_copy_a_refusal(tmp_path: Any) -> None:
    """The ls documents come from one week of rows through the handlers: the page is what the
    mail's own link opened on ls-report-page (200), a cut copy 403, the link four weeks on
    410 and past its view limit 429, each a page; in the written folder the mail's button opens the page's file."""
    ls = {d.name: d for d in gallery.ls_documents()}
    mail = ls["ls-report-mail"]
    [(link, target)] = mail.opens
    assert f"href='{link}'" in mail.html and link in (mail.text or "")
    assert "/report?t=v1." in link and target == "ls-report-page.html"
    assert ls["ls-report-page"].status == 200
    assert "42 enquiries from Mon 23 Nov 2026 to Sun 29 Nov 2026" in ls["ls-report-page"].html
    assert (ls["ls-report-link-refused"].status, ls["ls-report-link-expired"].status) == (403, 410)
    assert ls["ls-report-link-used-up"].status == 429
    gallery.write(str(tmp_path), shots=False)
    written = (tmp_path / "ls-report-mail.html").read_text(encoding="utf-8")
    assert "href='ls-report-page.html'" in written and link not in written
