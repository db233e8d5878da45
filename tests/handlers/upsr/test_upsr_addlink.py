"""upsr-addlink: a tampered, malformed or expired link changes nothing; a preview is redirected, not recorded; the SMS link fits one segment."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from handlers.common.link_tokens import SHORT_MAC_BYTES, Keyring, issue_short_token, issue_token
from handlers.upsell_recommender.domain import ADD_ACTION
from tests.handlers.upsr.conftest import (
    ADDLINK_KEYRING,
    T0,
    World,
    sent_offer,
    tap_event,
    token_in,
)
from testsupport.old_links import issue_s1_short_token


def _sent(world: World) -> tuple[str, dict[str, Any]]:
    offer = sent_offer(world)
    return token_in(world.messenger.sent[0].text), offer


def _flip(text: str, at: int) -> str:
    return text[:at] + ("A" if text[at] != "A" else "B") + text[at + 1 :]


def _tampered(token: str) -> dict[str, str]:
    """The short token of the SMS link, edited every way that matters."""
    kid, body = token.split(".")
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    data, mac = raw[:-SHORT_MAC_BYTES], raw[-SHORT_MAC_BYTES:]
    order = str(int.from_bytes(data[4:]))  # form and expiry 4 bytes, then the subject
    other_order = data[:4] + (int(order) + 1).to_bytes(len(data) - 4)  # another customer's offer

    def b64(value: bytes) -> str:
        return base64.urlsafe_b64encode(value).rstrip(b"=").decode()

    keys = Keyring.from_secret_string(ADDLINK_KEYRING)
    return {
        "payload edited (other offer)": f"{kid}.{b64(other_order + mac)}",
        "mac edited": f"{kid}.{b64(data + bytes([mac[0] ^ 1]) + mac[1:])}",
        "signed with another key": issue_short_token(
            Keyring.single("k1", "b" * 40), subject=order, action=ADD_ACTION, ttl_seconds=3600, now=T0
        ),
        "unknown key id": f"k9.{body}",
        "wrong action": issue_short_token(
            keys, subject=order, action="dm-confirm", ttl_seconds=10**7, now=T0
        ),
        "a full token of another action": issue_token(
            keys, subject=f"ofr-{order}:1", action="dm-confirm", ttl_seconds=10**7, now=T0
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "payload edited (other offer)",
        "mac edited",
        "signed with another key",
        "unknown key id",
        "wrong action",
        "a full token of another action",
    ],
)
def test_tampered_token_is_refused_and_records_nothing(world: World, case: str) -> None:
    token, offer = _sent(world)
    answer = world.tap(tap_event(_tampered(token)[case]), now=int(offer["sent_at"]) + 60)
    assert 400 <= answer["statusCode"] < 500
    assert "location" not in answer["headers"]
    assert json.loads(answer["body"])["error"]["code"] == "invalid_link"
    assert world.offer() == offer


@pytest.mark.parametrize("token", [None, "", "garbage", "v1.k1.x", "v2.k1.aa.bb"])
def test_malformed_or_missing_token_gets_400(world: World, token: str | None) -> None:
    _, offer = _sent(world)
    answer = world.tap(tap_event(token), now=int(offer["sent_at"]) + 60)
    assert answer["statusCode"] == 400
    assert world.offer() == offer


def test_expired_link_gets_410_and_records_nothing(world: World) -> None:
    token, offer = _sent(world)
    expiry = int(offer["window_ends_at"]) + 14 * 86400
    answer = world.tap(tap_event(token), now=expiry)
    assert answer["statusCode"] == 410
    assert world.offer() == offer
    # One second earlier the same link still works, and counts as a late tap.
    assert world.tap(tap_event(token), now=expiry - 1)["statusCode"] == 302
    late = world.offer()
    assert late is not None and late["state"] == "out-of-window"


def test_a_link_sent_before_the_compact_token_works_until_it_expires(world: World) -> None:
    """Links already in customers' messages carry the earlier short form (#40)."""
    _, offer = _sent(world)
    sent_at = int(offer["sent_at"])
    lifetime = int(offer["window_ends_at"]) + 14 * 86400 - sent_at
    old = issue_s1_short_token(Keyring.from_secret_string(ADDLINK_KEYRING), subject=str(offer["offer_id"])[4:],
                               action=ADD_ACTION, ttl_seconds=lifetime, now=sent_at)
    assert world.tap(tap_event(old), now=sent_at + lifetime)["statusCode"] == 410
    assert world.offer() == offer
    assert world.tap(tap_event(old), now=sent_at + 60)["statusCode"] == 302
    taken = world.offer()
    assert taken is not None and taken["state"] == "taken"


def test_a_customer_tapping_an_expired_link_reads_a_page_not_json(world: World) -> None:
    token, offer = _sent(world)
    event = tap_event(token)
    event["headers"]["accept"] = "text/html,application/xhtml+xml,*/*;q=0.8"
    answer = world.tap(event, now=int(offer["window_ends_at"]) + 14 * 86400)
    assert answer["statusCode"] == 410
    assert answer["headers"]["content-type"].startswith("text/html")
    assert "This offer has ended" in answer["body"] and '"error"' not in answer["body"]
    assert world.offer() == offer


def test_the_sms_link_fits_one_segment_with_a_real_function_url() -> None:
    from handlers.common.link_tokens import issue_short_token
    from handlers.common.sms import fits_one_segment
    from handlers.upsell_recommender.domain import Channel, Contact
    from handlers.upsell_recommender.nudges import compose
    from handlers.upsell_recommender.sending import link_subject, link_url
    from testsupport.gallery import FUNCTION_URL

    keys = Keyring.from_secret_string(ADDLINK_KEYRING)
    token = issue_short_token(keys, subject=link_subject("ofr-5443254255890"), action=ADD_ACTION,
                              ttl_seconds=17 * 86400, now=T0)
    url = link_url(FUNCTION_URL, token)
    assert len(token) <= 31 and len(url) <= 100 and url.count("/") == 3
    for title in ("Mat", "Organic Cotton \u201cPremium\u201d Gift Wrap with a Handwritten Card \U0001f381"):
        nudge = compose(Contact(Channel.SMS, "+447700900123", "Ann"), title, "It goes with it", url, business="Example Shop")
        assert fits_one_segment(nudge.text), nudge.text
        assert url in nudge.text and nudge.text.endswith("STOP to opt out.")


@pytest.mark.parametrize(
    ("method", "agent"),
    [("HEAD", "Mozilla/5.0"), ("GET", "WhatsApp/2.23.20.0"), ("GET", "Slackbot-LinkExpanding")],
)
def test_link_previews_are_redirected_but_not_recorded(
    world: World, method: str, agent: str
) -> None:
    token, offer = _sent(world)
    answer = world.tap(tap_event(token, method=method, agent=agent), now=int(offer["sent_at"]) + 5)
    assert answer["statusCode"] == 302
    assert world.offer() == offer


def test_post_to_the_link_is_refused(world: World) -> None:
    token, offer = _sent(world)
    answer = world.tap(tap_event(token, method="POST"), now=int(offer["sent_at"]) + 5)
    assert answer["statusCode"] == 405
    assert world.offer() == offer
