"""Link tokens: only an authentic, unexpired token for the right action and subject verifies,
and a consumed token reports "already used" the second time."""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import quote

import pytest

from handlers.common.link_tokens import (
    InvalidSignature,
    Keyring,
    MalformedToken,
    TokenError,
    TokenExpired,
    TokenFailure,
    TokenUse,
    UnknownKey,
    WrongAction,
    WrongSubject,
    consume_once,
    issue_token,
    verify_token,
)

NOW = 1_750_000_000
DAY = 86_400
K1 = Keyring.single("k1", "a" * 32 + "-first-signing-key")
K2_SECRET = "b" * 32 + "-second-signing-key"


def token(**overrides: Any) -> str:
    args: dict[str, Any] = {
        "subject": "pair#c1#c2",
        "action": "confirm",
        "ttl_seconds": 30 * DAY,
        "now": NOW,
    }
    args.update(overrides)
    return issue_token(K1, **args)


def test_round_trip() -> None:
    claims = verify_token(
        token(token_id="tid-1"), K1, action="confirm", subject="pair#c1#c2", now=NOW + 1
    )
    assert claims.subject == "pair#c1#c2"
    assert claims.action == "confirm"
    assert claims.token_id == "tid-1"
    assert (claims.issued_at, claims.expires_at, claims.kid) == (NOW, NOW + 30 * DAY, "k1")


def test_token_is_url_safe() -> None:
    value = token(subject="offer/ü 1&2")
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", value)
    assert quote(value, safe="") == value


def test_token_ids_are_unique() -> None:
    first = verify_token(token(), K1, action="confirm", now=NOW)
    second = verify_token(token(), K1, action="confirm", now=NOW)
    assert first.token_id != second.token_id


def _swap_payload(value: str, **changes: Any) -> str:
    version, kid, payload, mac = value.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims.update(changes)
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return ".".join([version, kid, forged, mac])


def test_tampered_payload_rejected() -> None:
    with pytest.raises(InvalidSignature) as caught:
        verify_token(_swap_payload(token(), s="pair#c9#c9"), K1, action="confirm", now=NOW)
    assert caught.value.reason is TokenFailure.BAD_SIGNATURE


def test_extended_expiry_rejected() -> None:
    with pytest.raises(InvalidSignature):
        verify_token(_swap_payload(token(), e=NOW + 999 * DAY), K1, action="confirm", now=NOW)


def test_tampered_signature_rejected() -> None:
    value = token()
    flipped = value[:-2] + ("A" if value[-2] != "A" else "B") + value[-1]
    with pytest.raises(InvalidSignature):
        verify_token(flipped, K1, action="confirm", now=NOW)


def test_wrong_key_rejected() -> None:
    """Same kid, another secret: an attacker who guesses the format still cannot sign."""
    attacker = Keyring.single("k1", "z" * 40)
    forged = issue_token(attacker, subject="pair#c1#c2", action="confirm", ttl_seconds=DAY, now=NOW)
    with pytest.raises(InvalidSignature):
        verify_token(forged, K1, action="confirm", now=NOW)


def test_unknown_kid_rejected() -> None:
    other = Keyring.single("k9", K2_SECRET)
    with pytest.raises(UnknownKey) as caught:
        verify_token(
            issue_token(other, subject="s", action="confirm", ttl_seconds=60, now=NOW),
            K1,
            action="confirm",
            now=NOW,
        )
    assert caught.value.reason is TokenFailure.UNKNOWN_KEY


def test_expired_rejected() -> None:
    value = token(ttl_seconds=60)
    verify_token(value, K1, action="confirm", now=NOW + 59)
    with pytest.raises(TokenExpired):
        verify_token(value, K1, action="confirm", now=NOW + 60)


def test_wrong_action_rejected() -> None:
    with pytest.raises(WrongAction):
        verify_token(token(action="reject"), K1, action="confirm", now=NOW)


def test_wrong_subject_rejected() -> None:
    with pytest.raises(WrongSubject):
        verify_token(token(), K1, action="confirm", subject="pair#c1#c3", now=NOW)


@pytest.mark.parametrize(
    "value",
    [
        "",
        None,
        "abc",
        "v2.k1.e30.sig",
        "v1.k1.e30",
        "v1.k 1.e30.sig",
        "v1.k1.e3+0.sig",
        "v1.k1.!!.sig",
        "x" * 5000,
    ],
)
def test_malformed_rejected(value: str | None) -> None:
    with pytest.raises(MalformedToken):
        verify_token(value, K1, action="confirm", now=NOW)


def test_authentic_but_odd_payload_is_malformed() -> None:
    """A payload we signed ourselves but without claims is refused, not crashed on."""
    import hashlib
    import hmac

    payload = base64.urlsafe_b64encode(b'{"s": 1}').rstrip(b"=").decode()
    signed = f"v1.k1.{payload}"
    mac = hmac.new(K1.keys["k1"], signed.encode(), hashlib.sha256).digest()
    value = f"{signed}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
    with pytest.raises(MalformedToken):
        verify_token(value, K1, action="confirm", now=NOW)


def test_rotation_keeps_old_tokens_until_their_key_is_removed() -> None:
    old = token()
    rotated = Keyring(keys={"k1": K1.keys["k1"], "k2": K2_SECRET.encode()}, active_kid="k2")
    new = issue_token(rotated, subject="pair#c1#c2", action="confirm", ttl_seconds=DAY, now=NOW)
    assert new.split(".")[1] == "k2"
    assert verify_token(old, rotated, action="confirm", now=NOW).kid == "k1"
    assert verify_token(new, rotated, action="confirm", now=NOW).kid == "k2"
    retired = Keyring(keys={"k2": K2_SECRET.encode()}, active_kid="k2")
    with pytest.raises(UnknownKey):
        verify_token(old, retired, action="confirm", now=NOW)


def test_keyring_from_secret_string() -> None:
    ring = Keyring.from_secret_string(
        json.dumps({"active_kid": "k2", "keys": {"k1": "a" * 32, "k2": K2_SECRET}})
    )
    assert ring.active_kid == "k2"
    assert ring.keys["k2"] == K2_SECRET.encode()
    assert "k2-secret" not in repr(ring) and K2_SECRET not in repr(ring)


@pytest.mark.parametrize(
    "secret",
    [
        "not json",
        "[]",
        '{"keys": {"k1": "' + "a" * 32 + '"}}',
        '{"active_kid": "k1", "keys": {"k1": "short"}}',
        '{"active_kid": "k2", "keys": {"k1": "' + "a" * 32 + '"}}',
    ],
)
def test_bad_keyrings_refused(secret: str) -> None:
    with pytest.raises(ValueError):
        Keyring.from_secret_string(secret)


def test_all_failures_share_one_base_class() -> None:
    for error in (
        MalformedToken,
        UnknownKey,
        InvalidSignature,
        TokenExpired,
        WrongAction,
        WrongSubject,
    ):
        assert issubclass(error, TokenError)


def test_token_used_twice_works_once(make_table: Any) -> None:
    table = make_table("used-tokens", "token_id", ttl="expires_at")
    claims = verify_token(token(), K1, action="confirm", now=NOW)
    assert consume_once(table, claims.token_id, claims.expires_at, now=NOW) is TokenUse.FIRST_USE
    assert (
        consume_once(table, claims.token_id, claims.expires_at, now=NOW + 5)
        is TokenUse.ALREADY_USED
    )
    item = table.get_item(Key={"token_id": claims.token_id})["Item"]
    assert item["expires_at"] == claims.expires_at
    assert item["used_at"] == NOW  # the first use is the one on record


def test_distinct_tokens_are_consumed_independently(make_table: Any) -> None:
    table = make_table("markers", "pk")
    assert (
        consume_once(table, "t-1", NOW + DAY, key_attr="pk", ttl_attr="ttl", now=NOW) is TokenUse.FIRST_USE
    )
    assert (
        consume_once(table, "t-2", NOW + DAY, key_attr="pk", ttl_attr="ttl", now=NOW) is TokenUse.FIRST_USE
    )
    assert (
        consume_once(table, "t-1", NOW + DAY, key_attr="pk", ttl_attr="ttl", now=NOW)
        is TokenUse.ALREADY_USED
    )
    assert table.get_item(Key={"pk": "t-2"})["Item"]["ttl"] == NOW + DAY
