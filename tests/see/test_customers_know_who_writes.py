"""The people the business earns from know who is writing (issue #40, customer side).

Every message ``make demo`` writes for a customer (the upsr nudge by SMS and email, the rrs ask
by email and SMS) names the business as the stack configures it; every SMS in its first words;
every email comes from "Business <address>" and has an HTML part beside its text; no link a
customer sees is longer than 100 characters; every page a tap lands on names the shop and
offers the way back. No browser: the phone checks of these pages are in test_what_people_see.
"""

from __future__ import annotations

import html
import re
from email.utils import parseaddr

import pytest

from testsupport import gallery

MESSAGES = gallery.customer_messages()
EMAILS = [m for m in MESSAGES if m.channel == "email"]
LINK = re.compile(r"https?://[^\s'\"<>]+")
HREF = re.compile(r"href='([^']+)'")
MAX_LINK = 100


def test_there_is_one_of_each() -> None:
    kinds = {(m.name.split("-")[0], m.channel) for m in MESSAGES}
    assert kinds == {("upsr", "sms"), ("upsr", "email"), ("rrs", "sms"), ("rrs", "email")}


@pytest.mark.parametrize("message", MESSAGES, ids=[m.name for m in MESSAGES])
def test_every_customer_message_names_the_business(message: gallery.CustomerMessage) -> None:
    assert message.business in message.text, message.text
    if message.channel == "sms":
        # First words: a text from an unknown sender with a link reads like phishing.
        assert message.text.startswith(f"{message.business}:"), message.text
    else:
        assert message.business in message.html


@pytest.mark.parametrize("message", EMAILS, ids=[m.name for m in EMAILS])
def test_every_customer_email_has_a_display_name_and_an_html_part(message: gallery.CustomerMessage) -> None:
    name, address = parseaddr(message.sender)
    assert name == message.business and "@" in address, message.sender
    assert message.sender == f"{message.business} <{address}>"
    assert message.html.startswith("<!doctype html>") and "data-primary" in message.html
    assert message.text.strip() and "<" not in message.text


@pytest.mark.parametrize("message", MESSAGES, ids=[m.name for m in MESSAGES])
def test_no_customer_link_is_longer_than_100_characters(message: gallery.CustomerMessage) -> None:
    links = LINK.findall(message.text) + [html.unescape(h) for h in HREF.findall(message.html)]
    assert links, message.name
    long = [link for link in links if len(link) > MAX_LINK]
    assert not long, [f"{len(link)}: {link}" for link in long]


PAGES = [d for d in gallery.documents() if d.name.startswith("upsr-tap-")]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_page_a_tap_lands_on_names_the_shop_and_the_way_back(page: gallery.Document) -> None:
    assert page.status >= 400
    assert gallery.SHOP in page.html
    assert f"href='{gallery.SHOP_SITE}'" in page.html and f"Go to {gallery.SHOP}" in page.html


def test_the_upsr_sms_leaves_out_the_greeting_before_the_name_or_the_link() -> None:
    """The name, the link and the opt-out are always whole in one segment."""
    for message in gallery.upsr_sms():
        assert gallery.FUNCTION_URL.split("/")[2] in message.text
        assert message.text.startswith(f"{gallery.SHOP}: ") and message.text.endswith("Reply STOP to opt out.")
