"""One handle at two providers is a work and a personal mailbox: two contexts of one life, never
a reason to weigh their two cities as if one context held both."""

from __future__ import annotations

import math

from handlers.duplicate_merger.matcher import ProfileBuilder
from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.levels import field_levels, pair_context
from handlers.duplicate_merger.matcher.profile import FIELDS
from handlers.duplicate_merger.matcher.scorer import Scorer

TOTAL = 20_000
BASELINE = math.log2(2_700 / (TOTAL * (TOTAL - 1) / 2))  # about 14 % of contacts duplicated

WORK = {"firstname": "Gilda", "lastname": "Collins", "email": "gilda.collins@carbajalins.com",
        "phone": "+18523120049", "city": "Oakland", "state": "CA", "company": "Carbajal Insurance"}
PERSONAL = {"firstname": "Gilda", "lastname": "Collins", "email": "gilda.collins@protonmail.com",
            "mobilephone": "+16858964201", "address": "12 Birch Road", "city": "Pittsburgh",
            "state": "PA"}


def _context(a: dict[str, str], b: dict[str, str]) -> str:
    builder = ProfileBuilder()
    av, bv = builder.build("1", a).values(), builder.build("2", b).values()
    return pair_context(field_levels(av, bv), av, bv)


def _score(a: dict[str, str], b: dict[str, str]) -> float:
    builder = ProfileBuilder()
    counts = [2 if f in ("first", "last") else 1 for f in FIELDS]  # a rare full name
    return Scorer(TOTAL, Thresholds(automatic=12.0, propose=0.0), BASELINE).score(
        builder.build("1", a), counts, builder.build("2", b), counts).score


def test_one_handle_at_two_providers_is_two_contexts() -> None:
    assert _context(WORK, PERSONAL) == "other"
    # The same mailbox mistyped (one edit, one provider) is still one context.
    mistyped = {"firstname": "Gilda", "lastname": "Collins", "email": "gilda.colins@protonmail.com",
                "city": "Oakland", "state": "CA"}
    assert _context(PERSONAL, mistyped) == "one"


def test_a_shared_handle_never_costs_a_pair_what_two_unrelated_mailboxes_do_not() -> None:
    unrelated = {**PERSONAL, "email": "gc1977@protonmail.com"}
    assert _context(WORK, unrelated) == "other"
    # Read as one context, the handle made the two cities weigh 3.6 bits against the pair.
    assert _score(WORK, PERSONAL) >= _score(WORK, unrelated)
