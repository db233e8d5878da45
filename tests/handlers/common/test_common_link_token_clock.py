"""Link tokens against the clock, both ways (issue #27, finding 5)."""

from __future__ import annotations

import pytest

from handlers.common import link_tokens
from handlers.common.link_tokens import Keyring, TokenError, issue_token, verify_token

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
