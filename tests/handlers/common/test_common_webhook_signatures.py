"""Webhook signatures: authentic bodies pass; tampering, wrong keys and replays do not."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handlers.common.function_url import Request
from handlers.common.webhook_signatures import (
    SignatureError,
    SignatureFailure,
    SignedWebhook,
    sign_base64_hmac,
    sign_timestamped,
    verify_base64_hmac,
    verify_timestamped,
)

SECRET = "whsec_test_secret_0123456789"
BODY = b'{"id": 820982911946154508, "total_price": "199.00"}'
NOW = 1_750_000_000

# RFC-style known answer (HMAC-SHA256, key "key"), independent of the module under test.
FOX = b"The quick brown fox jumps over the lazy dog"
FOX_HEX = "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"


def test_base64_known_answer() -> None:
    expected = base64.b64encode(bytes.fromhex(FOX_HEX)).decode()
    assert sign_base64_hmac(FOX, "key") == expected
    verify_base64_hmac(FOX, expected, "key")


def test_base64_authentic_body_passes() -> None:
    verify_base64_hmac(BODY, sign_base64_hmac(BODY, SECRET), SECRET)


def test_base64_tampered_body_rejected() -> None:
    signature = sign_base64_hmac(BODY, SECRET)
    with pytest.raises(SignatureError) as caught:
        verify_base64_hmac(BODY.replace(b"199.00", b"1.00"), signature, SECRET)
    assert caught.value.failure is SignatureFailure.MISMATCH


def test_base64_wrong_key_rejected() -> None:
    signature = sign_base64_hmac(BODY, "another-secret")
    with pytest.raises(SignatureError) as caught:
        verify_base64_hmac(BODY, signature, SECRET)
    assert caught.value.failure is SignatureFailure.MISMATCH


@pytest.mark.parametrize(
    ("header", "failure"),
    [
        (None, SignatureFailure.MISSING),
        ("  ", SignatureFailure.MISSING),
        ("not base64!", SignatureFailure.MALFORMED),
        ("é", SignatureFailure.MALFORMED),
    ],
)
def test_base64_missing_or_malformed(header: str | None, failure: SignatureFailure) -> None:
    with pytest.raises(SignatureError) as caught:
        verify_base64_hmac(BODY, header, SECRET)
    assert caught.value.failure is failure


def test_empty_secret_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        verify_base64_hmac(BODY, sign_base64_hmac(BODY, "x"), "")


@given(body=st.binary(max_size=256), other=st.binary(max_size=256))
def test_base64_any_other_body_rejected(body: bytes, other: bytes) -> None:
    signature = sign_base64_hmac(body, SECRET)
    if other == body:
        verify_base64_hmac(other, signature, SECRET)
    else:
        with pytest.raises(SignatureError):
            verify_base64_hmac(other, signature, SECRET)


def test_timestamped_known_answer() -> None:
    # v1 = hex(HMAC(key, f"{t}.{body}")): with t=0 and body FOX, the message is "0." + FOX.
    import hashlib
    import hmac

    expected = hmac.new(b"key", b"0." + FOX, hashlib.sha256).hexdigest()
    assert sign_timestamped(FOX, "key", 0) == f"t=0,v1={expected}"


def test_timestamped_authentic_body_passes() -> None:
    header = sign_timestamped(BODY, SECRET, NOW - 10)
    assert verify_timestamped(BODY, header, SECRET, now=NOW) == NOW - 10


def test_timestamped_tampered_body_rejected() -> None:
    header = sign_timestamped(BODY, SECRET, NOW)
    with pytest.raises(SignatureError) as caught:
        verify_timestamped(BODY + b" ", header, SECRET, now=NOW)
    assert caught.value.failure is SignatureFailure.MISMATCH


def test_timestamped_wrong_key_rejected() -> None:
    header = sign_timestamped(BODY, "another-secret", NOW)
    with pytest.raises(SignatureError) as caught:
        verify_timestamped(BODY, header, SECRET, now=NOW)
    assert caught.value.failure is SignatureFailure.MISMATCH


def test_replayed_timestamp_rejected() -> None:
    """An authentic request captured earlier and sent again later is outside the window."""
    header = sign_timestamped(BODY, SECRET, NOW)
    verify_timestamped(BODY, header, SECRET, now=NOW + 300)  # still inside the window
    with pytest.raises(SignatureError) as caught:
        verify_timestamped(BODY, header, SECRET, now=NOW + 301)
    assert caught.value.failure is SignatureFailure.STALE


def test_future_timestamp_rejected() -> None:
    header = sign_timestamped(BODY, SECRET, NOW + 3600)
    with pytest.raises(SignatureError) as caught:
        verify_timestamped(BODY, header, SECRET, now=NOW)
    assert caught.value.failure is SignatureFailure.STALE


def test_rewritten_timestamp_breaks_signature() -> None:
    """Moving t into the window by hand does not help: t is signed."""
    old = sign_timestamped(BODY, SECRET, NOW - 3600)
    forged = old.replace(f"t={NOW - 3600}", f"t={NOW}")
    with pytest.raises(SignatureError) as caught:
        verify_timestamped(BODY, forged, SECRET, now=NOW)
    assert caught.value.failure is SignatureFailure.MISMATCH


def test_any_of_several_v1_values_may_match() -> None:
    good = sign_timestamped(BODY, SECRET, NOW)
    header = f"t={NOW},v1={'0' * 64},{good.split(',')[1]},v0=ignored"
    assert verify_timestamped(BODY, header, SECRET, now=NOW) == NOW


@pytest.mark.parametrize(
    ("header", "failure"),
    [
        (None, SignatureFailure.MISSING),
        ("", SignatureFailure.MISSING),
        ("v1=abc", SignatureFailure.MALFORMED),
        (f"t={NOW}", SignatureFailure.MALFORMED),
        ("t=yesterday,v1=abc", SignatureFailure.MALFORMED),
        (f"t=-{NOW},v1=abc", SignatureFailure.MALFORMED),
    ],
)
def test_timestamped_missing_or_malformed(header: str | None, failure: SignatureFailure) -> None:
    with pytest.raises(SignatureError) as caught:
        verify_timestamped(BODY, header, SECRET, now=NOW)
    assert caught.value.failure is failure


def _request(body: bytes, **headers: str) -> Request:
    return Request("POST", {k.lower(): v for k, v in headers.items()}, {}, body)


@pytest.mark.parametrize("form", ["base64", "timestamped"])
def test_a_signed_webhook_admits_the_authentic_and_answers_the_rest_401(form: str) -> None:
    """One helper for both providers' forms: the refusal names no failure, the log does."""
    hook = SignedWebhook("X-Sig", form, "not signed by the provider")  # type: ignore[arg-type]

    def sign(body: bytes) -> str:
        return sign_base64_hmac(body, SECRET) if form == "base64" else sign_timestamped(body, SECRET, NOW)
    assert hook.refusal(_request(BODY, **{"X-Sig": sign(BODY)}), SECRET, now=NOW) is None
    for refused in (
        _request(BODY),  # no signature
        _request(BODY + b" ", **{"X-Sig": sign(BODY)}),  # another body
        _request(BODY, **{"X-Sig": sign(BODY)[:-2] + "zz"}),  # tampered
    ):
        answer = hook.refusal(refused, SECRET, now=NOW)
        assert answer is not None and answer["statusCode"] == 401
        assert json.loads(answer["body"]) == {
            "error": {"code": "invalid_signature", "message": "not signed by the provider"}
        }


def test_a_signed_webhook_refuses_a_stale_timestamp() -> None:
    hook = SignedWebhook("X-Sig", "timestamped", "stale")
    late = _request(BODY, **{"X-Sig": sign_timestamped(BODY, SECRET, NOW)})
    assert hook.refusal(late, SECRET, now=NOW + 301) is not None
    assert hook.refusal(late, SECRET, now=NOW + 299) is None
