"""The static normalisation table: many spellings, one key; direct, referrer and tag paths."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handlers.source_attributor.sources import classify, classify_answer, slug, source_key

SITE = frozenset({"www.example.com", "example.com"})
PAGE = "https://www.example.com/pricing"


@pytest.mark.parametrize(
    ("url", "referrer"),
    [
        (PAGE + "?utm_source=Google&utm_medium=organic", ""),
        (PAGE + "?utm_source=google.com", ""),
        (PAGE, "https://www.google.co.uk/"),
        (PAGE, "https://google.de/search?q=x"),
    ],
)
def test_spellings_of_google_are_one_source(url: str, referrer: str) -> None:
    detected = classify(url, referrer, SITE)
    assert detected is not None
    assert detected.source == "google"
    assert detected.medium == "organic"


@pytest.mark.parametrize(
    "spelling", ["facebook", "Facebook", "FB", "facebook.com", "Meta Ads", "fb_ads"]
)
def test_spellings_of_facebook_are_one_key(spelling: str) -> None:
    assert source_key(spelling) == "facebook"


def test_tags_win_over_the_referrer_and_carry_campaign_and_medium() -> None:
    detected = classify(
        PAGE + "?utm_source=LinkedIn&utm_medium=Paid-Social&utm_campaign=Spring%20Sale",
        "https://www.facebook.com/",
        SITE,
    )
    assert detected is not None
    assert (detected.source, detected.medium, detected.campaign, detected.how_detected) == (
        "linkedin", "cpc", "Spring Sale", "utm",
    )
    assert detected.referrer_host == "www.facebook.com"
    assert detected.landing == "/pricing"


def test_click_ids_are_tags() -> None:
    detected = classify(PAGE + "?gclid=abc", "", SITE)
    assert detected is not None
    assert (detected.source, detected.medium, detected.how_detected) == ("google", "cpc", "utm")


def test_unknown_referrer_keeps_its_host_and_raw_host_is_verbatim() -> None:
    detected = classify(PAGE, "https://Blog.Other.org:8443/post", SITE)
    assert detected is not None
    assert detected.source == "blog.other.org"
    assert detected.medium == "referral"
    assert detected.referrer_host == "Blog.Other.org"
    assert detected.how_detected == "referrer"


def test_no_referrer_is_direct_and_guessed() -> None:
    detected = classify(PAGE + "?q=1", "", SITE)
    assert detected is not None
    assert (detected.source, detected.medium, detected.how_detected) == ("direct", "direct", "none")


def test_internal_navigation_is_not_an_arrival() -> None:
    assert classify(PAGE, "https://example.com/", SITE) is None


def test_landing_never_keeps_the_query() -> None:
    detected = classify(PAGE + "?email=a@b.com&utm_source=x", "", SITE)
    assert detected is not None
    assert detected.landing == "/pricing"


@pytest.mark.parametrize(
    ("answer", "key"),
    [
        ("Google", "google"),
        ("saw you on Facebook", "facebook"),
        ("Heard you on Podcast X!", "podcast_x"),
        ("a friend told me", "word_of_mouth"),
        ("x-ray clinic down the road", "other"),
        ("", "other"),
    ],
)
def test_free_text_answers(answer: str, key: str) -> None:
    assert classify_answer(answer) == key


@given(st.text(max_size=80))
def test_slug_is_idempotent_and_safe(text: str) -> None:
    once = slug(text)
    assert slug(once) == once
    assert all(c.isascii() and (c.isalnum() or c == "_") for c in once)
