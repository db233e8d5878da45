"""Link tokens against the clock, both ways (issue #27, finding 5)."""

from __future__ import annotations

import pytest

from handlers.common import link_tokens
from handlers.common.link_tokens import (
    Keyring,
    TokenError,
    issue_short_token,
    issue_token,
    verify_short_token,
    verify_token,
)
from testsupport.old_links import issue_s1_short_token

NOW = 1_750_000_000
KEYS = Keyring.single("k1", "a" * 32 + "-first-signing-key")
SKEW = 300  # the stated bound, link_tokens.MAX_CLOCK_SKEW_S


def issued_at(moment: int, ttl: int = 3600) -> str:
    return issue_token(KEYS, subject="pair#c1#c2", action="confirm", ttl_seconds=ttl, now=moment)


@pytest.mark.parametrize("ahead", [SKEW + 1, 3600, 30 * 86_400])
def test_a_token_issued_in_the_future_is_refused(ahead: int) -> None:
    """Found on a1a1316: an authentic token whose issued-at lies ahead was accepted."""
    with pytest.raises(TokenError) as refused:
        verify_token(issued_at(NOW + ahead), KEYS, action="confirm", now=NOW)
    assert refused.value.reason.value == "not_yet_valid"


@pytest.mark.parametrize("ahead", [0, 1, SKEW])
def test_a_clock_a_little_behind_the_issuer_is_tolerated(ahead: int) -> None:
    claims = verify_token(issued_at(NOW + ahead), KEYS, action="confirm", now=NOW)
    assert claims.issued_at == NOW + ahead


def test_the_bound_is_stated_once() -> None:
    assert link_tokens.MAX_CLOCK_SKEW_S == SKEW


def short_issued_at(moment: int, ttl: int = 72 * 3600) -> str:
    """upsr's SMS link as sent before the compact form (#26): the order number, an issue time."""
    return issue_s1_short_token(KEYS, subject="5443254255890", action="upsr-add", ttl_seconds=ttl, now=moment)


@pytest.mark.parametrize("ahead", [SKEW + 1, 3600, 30 * 86_400])
def test_a_short_token_issued_in_the_future_is_refused_by_the_same_rule(ahead: int) -> None:
    """Found on ae6d6c4: the short token carried no issue time, so a short token issued
    ``ahead`` seconds in the future (a wrong clock at the issuer, a leaked key) was accepted."""
    with pytest.raises(TokenError) as refused:
        verify_short_token(short_issued_at(NOW + ahead), KEYS, action="upsr-add", now=NOW)
    assert refused.value.reason.value == "not_yet_valid"


@pytest.mark.parametrize("ahead", [0, 1, SKEW])
def test_a_short_token_from_a_clock_a_little_ahead_is_tolerated(ahead: int) -> None:
    claims = verify_short_token(short_issued_at(NOW + ahead), KEYS, action="upsr-add", now=NOW)
    assert (claims.issued_at, claims.subject) == (NOW + ahead, "5443254255890")


def compact(moment: int, ttl: int) -> str:
    return issue_short_token(KEYS, subject="5443254255890", action="upsr-add", ttl_seconds=ttl, now=moment)


@pytest.mark.parametrize("ahead", [SKEW + 1, 30 * 86_400])
def test_a_compact_token_living_longer_than_any_issuer_gives_is_refused(ahead: int) -> None:
    """The compact form carries no issue time (#40: it made upsr's link 104 characters), so the
    bound is on the expiry: no more than the longest lifetime (plus the skew) ahead of now."""
    with pytest.raises(TokenError) as refused:
        verify_short_token(compact(NOW + ahead, link_tokens.MAX_SHORT_TTL_S), KEYS, action="upsr-add", now=NOW)
    assert refused.value.reason.value == "not_yet_valid"


def test_a_compact_token_of_the_longest_life_from_a_clock_a_little_ahead_is_tolerated() -> None:
    claims = verify_short_token(compact(NOW + SKEW, link_tokens.MAX_SHORT_TTL_S), KEYS, action="upsr-add", now=NOW)
    assert claims.expires_at == NOW + SKEW + link_tokens.MAX_SHORT_TTL_S


def test_a_short_token_lifetime_must_fit_its_three_bytes() -> None:
    with pytest.raises(ValueError, match="ttl_seconds"):
        compact(NOW, ttl=link_tokens.MAX_SHORT_TTL_S + 1)
