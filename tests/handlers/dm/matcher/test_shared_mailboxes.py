"""A mailbox two records hold under two full names is a desk's or a family's: its rarity says
who shares it, not that the two are one person."""

from __future__ import annotations

import math

from handlers.duplicate_merger.matcher import ProfileBuilder
from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.profile import FIELDS
from handlers.duplicate_merger.matcher.scorer import Scorer

TOTAL = 100_000
BASELINE = math.log2(13_500 / (TOTAL * (TOTAL - 1) / 2))  # about 14 % of contacts duplicated

OFFICE = {"email": "frontdesk@pettrygroup.com", "phone": "+13095198870", "company": "Pettry",
          "address": "136 Ridge Road", "city": "Pittsburgh", "state": "PA"}


def _score(a: dict[str, str], b: dict[str, str]) -> tuple[float, dict[str, float]]:
    builder = ProfileBuilder()
    # The mailbox, line and address only these two hold; names of ordinary rarity.
    counts = [2 if f in ("email", "phone", "house", "company") else 30 for f in FIELDS]
    pair = Scorer(TOTAL, Thresholds(automatic=12.0, propose=0.0), BASELINE).score(
        builder.build("1", a), counts, builder.build("2", b), counts)
    return pair.score, {t.field: t.weight for t in pair.terms}


def test_two_coworkers_at_one_desk_mailbox_are_not_proposed() -> None:
    george = {"firstname": "George", "lastname": "Sutherland", **OFFICE}
    jennifer = {"firstname": "Jennifer", "lastname": "Sears", **OFFICE}
    score, weights = _score(george, jennifer)
    assert weights["email"] < 1.0  # explained, as a role mailbox is
    assert score < 0.0  # was 13 bits of mailbox: proposed as one person


def test_one_person_under_a_changed_name_keeps_the_mailbox() -> None:
    # One name changed (a marriage): the mailbox is still one person's.
    before = {"firstname": "Jennifer", "lastname": "Sears", **OFFICE}
    after = {"firstname": "Jennifer", "lastname": "Olson", **OFFICE}
    score, weights = _score(before, after)
    assert weights["email"] > 10.0
    assert score > 0.0
