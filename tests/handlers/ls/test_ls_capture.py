"""ls-capture over moto: one touch per arrival, enquiries hashed, bad input writes nothing."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from handlers.common.aws_clients import client
from handlers.source_attributor.email_hash import email_hash
from handlers.source_attributor.functions import capture
from tests.handlers.ls.conftest import (
    HASH_KEY,
    KEY_SECRET,
    ORIGIN,
    Clock,
    arrival,
    beacon,
    enquiry,
    items,
)
from testsupport.metrics import count_metrics, emitted

pytestmark = pytest.mark.usefixtures("apps")
VISITOR = "visitor-aaaaaaaaaaaaaaaa"
OTHER_VISITOR = "visitor-bbbbbbbbbbbbbbbb"


def send(event: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = capture.handler(event, None)
    return answer


def body(response: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(response["body"]))


def nothing_written() -> bool:
    return items("dev-ls-touches") == [] and items("dev-ls-enquiries") == []


def test_arrival_writes_one_normalised_touch_and_sets_the_cookie(clock: Clock) -> None:
    url = f"{ORIGIN}/pricing?utm_source=Google&utm_medium=cpc&utm_campaign=spring"
    response = send(beacon(arrival(url, "https://www.google.com/")))
    assert response["statusCode"] == 200
    answer = body(response)
    assert answer["recorded"] is True
    (cookie,) = response["cookies"]
    assert cookie.startswith(f"ls_vid={answer['visitor_id']};")
    for attribute in ("Max-Age=63072000", "Secure", "HttpOnly", "SameSite=Lax", "Path=/"):
        assert attribute in cookie
    (touch,) = items("dev-ls-touches")
    assert touch == {
        "visitor_id": answer["visitor_id"],
        "at": "2026-08-11T09:00:00.000000Z",
        "source": "google",
        "medium": "cpc",
        "campaign": "spring",
        "referrer_host": "www.google.com",
        "landing": "/pricing",
        "how_detected": "utm",
        "ttl": int(clock.now.timestamp()) + 548 * 86400,
    }
    assert response["headers"]["access-control-allow-origin"] == ORIGIN


def test_cookie_is_read_when_present_and_not_set_again(clock: Clock) -> None:
    response = send(beacon(arrival(f"{ORIGIN}/"), cookies=[f"ls_vid={VISITOR}", "other=1"]))
    assert body(response)["visitor_id"] == VISITOR
    assert "cookies" not in response
    assert [t["visitor_id"] for t in items("dev-ls-touches")] == [VISITOR]


def test_body_id_is_used_without_a_cookie_and_linked_when_the_cookie_differs(
    clock: Clock,
) -> None:
    send(beacon(arrival(f"{ORIGIN}/", visitor_id=VISITOR)))
    clock.advance(minutes=40)
    response = send(
        beacon(arrival(f"{ORIGIN}/", "https://t.co/x", visitor_id=VISITOR),
               cookies=[f"ls_vid={OTHER_VISITOR}"])
    )
    assert body(response)["visitor_id"] == OTHER_VISITOR
    first, second = sorted(items("dev-ls-touches"), key=lambda t: t["at"])
    assert first["visitor_id"] == VISITOR and "linked_visitor_id" not in first
    assert second["visitor_id"] == OTHER_VISITOR
    assert second["linked_visitor_id"] == VISITOR


def test_three_spellings_of_one_channel_are_stored_as_one_source(clock: Clock) -> None:
    for url, referrer in (
        (f"{ORIGIN}/?utm_source=Facebook", ""),
        (f"{ORIGIN}/?utm_source=fb", ""),
        (f"{ORIGIN}/", "https://l.facebook.com/l.php?u=x"),
    ):
        clock.advance(seconds=1)
        send(beacon(arrival(url, referrer, visitor_id=VISITOR)))
    assert {t["source"] for t in items("dev-ls-touches")} == {"facebook"}
    assert len(items("dev-ls-touches")) == 3


def test_internal_navigation_writes_nothing(clock: Clock) -> None:
    response = send(beacon(arrival(f"{ORIGIN}/b", f"{ORIGIN}/a", visitor_id=VISITOR)))
    assert response["statusCode"] == 200
    assert body(response) == {"visitor_id": VISITOR, "recorded": False}
    assert nothing_written()


def test_enquiry_stores_a_keyed_hash_the_raw_answer_and_an_asked_touch(clock: Clock) -> None:
    response = send(beacon(enquiry(" Ada@Example.COM ", "Heard you on Podcast X!",
                                   visitor_id=VISITOR)))
    assert response["statusCode"] == 200
    answer = body(response)
    assert answer["recorded"] is True
    (row,) = items("dev-ls-enquiries")
    assert row == {
        "month": "2026-08",
        "enquiry_id": answer["enquiry_id"],
        "at": "2026-08-11T09:00:00.000000Z",
        "visitor_id": VISITOR,
        "email_hash": email_hash("ada@example.com", HASH_KEY.encode()),
        "heard_about": "Heard you on Podcast X!",
        "landing": "/contact",
        "ttl": int(clock.now.timestamp()) + 548 * 86400,  # it expires like a touch (issue 42)
    }
    (touch,) = items("dev-ls-touches")
    assert touch["ttl"] == row["ttl"]
    assert (touch["source"], touch["medium"], touch["how_detected"]) == (
        "podcast_x", "asked", "none",
    )
    assert touch["at"] == row["at"]
    everything = json.dumps(items("dev-ls-enquiries") + items("dev-ls-touches"), default=str)
    assert "ada@example.com" not in everything.lower()
    assert "source" not in row


def test_a_resubmitted_enquiry_is_written_once(clock: Clock) -> None:
    first = body(send(beacon(enquiry("ada@example.com", "google", visitor_id=VISITOR))))
    clock.advance(seconds=3)
    again = body(send(beacon(enquiry("ada@example.com", "google", visitor_id=VISITOR))))
    assert again["enquiry_id"] == first["enquiry_id"]
    assert (first["recorded"], again["recorded"]) == (True, False)
    assert len(items("dev-ls-enquiries")) == 1
    assert len(items("dev-ls-touches")) == 1


def test_two_submissions_are_two_enquiries_and_no_answer_means_no_asked_touch(
    clock: Clock,
) -> None:
    send(beacon(enquiry("ada@example.com", visitor_id=VISITOR, submission_id="sub-aaaaaaa1")))
    clock.advance(days=2)
    send(beacon(enquiry("ada@example.com", visitor_id=VISITOR, submission_id="sub-aaaaaaa2")))
    assert len(items("dev-ls-enquiries")) == 2
    assert items("dev-ls-touches") == []


def test_enquiry_without_the_key_is_refused_and_writes_nothing(clock: Clock) -> None:
    client("secretsmanager").delete_secret(SecretId=KEY_SECRET, ForceDeleteWithoutRecovery=True)
    response = send(beacon(enquiry("ada@example.com", "google", visitor_id=VISITOR)))
    assert response["statusCode"] == 503
    assert nothing_written()


@pytest.mark.parametrize(
    ("event", "status", "code"),
    [
        (beacon(None), 400, "invalid_json"),
        (beacon(raw="{not json"), 400, "invalid_json"),
        (beacon(raw="[1, 2]"), 400, "invalid_json"),
        (beacon(raw=json.dumps({"kind": "arrival", "url": "x" * 9000})), 413,
         "payload_too_large"),
        (beacon({"kind": "arrival"}), 400, "missing_field"),
        (beacon({"kind": "arrival", "url": "javascript:alert(1)"}), 400, "invalid_field"),
        (beacon({"kind": "pageview", "url": f"{ORIGIN}/"}), 400, "invalid_kind"),
        (beacon(enquiry("not-an-email")), 400, "invalid_email"),
        (beacon(enquiry("a@example.com", "x" * 1001)), 400, "invalid_field"),
        (beacon(enquiry("a@example.com", submission_id="bad id!")), 400, "invalid_field"),
        (beacon(arrival(f"{ORIGIN}/"), origin="https://evil.example.net"), 403,
         "origin_not_allowed"),
        (beacon(arrival(f"{ORIGIN}/"), origin=None), 403, "origin_not_allowed"),
        (beacon(arrival(f"{ORIGIN}/"), method="GET"), 405, "method_not_allowed"),
    ],
)
def test_bad_input_gets_a_4xx_and_writes_nothing(
    event: dict[str, Any], status: int, code: str
) -> None:
    response = send(event)
    assert response["statusCode"] == status
    assert json.loads(response["body"])["error"]["code"] == code
    assert nothing_written()


def test_an_oversized_base64_body_is_refused_before_decoding() -> None:
    event = beacon(None)
    event["body"] = base64.b64encode(b"{" + b" " * 20000 + b"}").decode()
    event["isBase64Encoded"] = True
    assert send(event)["statusCode"] == 413
    assert nothing_written()


@pytest.mark.parametrize(
    "user_agent",
    [
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 HeadlessChrome/120.0",
        "facebookexternalhit/1.1",
        "curl/8.5.0",
        "python-requests/2.32",
        "",
        None,
    ],
)
def test_known_bots_get_a_silent_204_and_write_nothing(user_agent: str | None) -> None:
    response = send(beacon(arrival(f"{ORIGIN}/", "https://www.google.com/"),
                           user_agent=user_agent))
    assert response["statusCode"] == 204
    assert response["body"] == ""
    assert nothing_written()


def test_foreign_origin_is_refused_before_the_body_is_read() -> None:
    event = beacon(origin="https://evil.example.net", raw="{not json")
    assert send(event)["statusCode"] == 403


def test_preflight_from_the_site_is_answered() -> None:
    response = send(beacon(method="OPTIONS"))
    assert response["statusCode"] == 204
    assert response["headers"]["access-control-allow-origin"] == ORIGIN
    assert nothing_written()


def test_a_check_beacon_counts_in_no_business_metric(
    clock: Clock, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """make verify's arrival (marked ``x-crm-check``) is recorded but not counted; a real one
    counts one beacon."""
    count_metrics(monkeypatch)
    capsys.readouterr()

    def counted() -> list[tuple[str, float]]:
        return [(name, value) for name, value, _ in emitted(capsys.readouterr().out, service="ls")]

    checked = beacon(arrival(f"{ORIGIN}/?check=1", "https://www.google.com/"))
    checked["headers"]["x-crm-check"] = "1"
    assert body(send(checked))["recorded"] is True
    assert counted() == []
    assert body(send(beacon(arrival(f"{ORIGIN}/", "https://www.google.com/"))))["recorded"] is True
    assert counted() == [("Beacons", 1.0)]
