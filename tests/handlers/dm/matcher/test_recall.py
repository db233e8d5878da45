"""Issue 30: the evidence that keeps true pairs in the band on any contact data.

The baseline counted from the CRM's own evidence, an employer's main line that is not a home,
two contexts' identifier differences as one fact, and birth dates before 1850 kept.
"""

from __future__ import annotations

import math
import random
import string

import pytest

from handlers.duplicate_merger.matcher import normalize
from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.baseline import baseline, baseline_bits, expected_duplicates
from handlers.duplicate_merger.matcher.levels import (
    Level,
    field_levels,
    retyped_date_part,
    shared_home,
)
from handlers.duplicate_merger.matcher.profile import FIELDS, Profile
from handlers.duplicate_merger.matcher.scorer import Scorer
from handlers.duplicate_merger.matcher.weights import (
    DATE_PART_SPREAD,
    HOUSEHOLD_SURNAME_SHARE,
    PRIORS,
    implied_floors,
)
from handlers.duplicate_merger.pipeline import run_blocking

THRESHOLDS = Thresholds(automatic=12.0, propose=0.0)
LAST = FIELDS.index("last")


def test_the_fixed_point_counts_the_duplicates_the_evidence_says() -> None:
    all_pairs = 10_000 * 9_999 / 2
    evidence = [40.0] * 100 + [-40.0] * 5_000  # 100 sure duplicates, 5,000 sure strangers
    assert math.isclose(expected_duplicates(evidence, all_pairs, 1.0, 2.0), 100.0, rel_tol=1e-3)
    # each sampled pair stands for ``scale`` pairs
    assert math.isclose(expected_duplicates(evidence, all_pairs, 3.0, 2.0), 300.0, rel_tol=1e-3)


def test_the_evidence_raises_a_baseline_the_sure_pairs_put_too_low() -> None:
    total, all_pairs = 10_000, 10_000 * 9_999 / 2
    # RLdata's shape: every duplicate changed a field, so 8 of 1,000 meet a sure rule
    evidence = [35.0] * 1_000 + [-30.0] * 20_000
    bits = baseline_bits(total, 8, evidence, 1)
    assert math.isclose(bits, math.log2(1_000 / all_pairs), abs_tol=0.01)
    assert bits > baseline(total, 8) + 5
    # where the sure pairs say more (a CRM whose work and personal records share little but
    # a name), they stand
    assert baseline_bits(total, 3_000, evidence, 1) == baseline(total, 3_000)
    assert baseline_bits(total, 8, [], 1) == baseline(total, 8)


def _word(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))


def test_dm_block_counts_the_baseline_of_a_register_whose_duplicates_all_changed() -> None:
    rng = random.Random(30)
    profiles: list[Profile] = []
    for n in range(400):
        first, last = _word(rng, 6), _word(rng, 7)
        dob = f"19{rng.randint(10, 99)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
        profiles.append(Profile(f"{n:04}a", first=first, last=last, dob=dob))
        if n < 100:  # re-entered with a surname typo: no sure rule meets it
            typo = last[:3] + ("x" if last[3] != "x" else "y") + last[4:]
            profiles.append(Profile(f"{n:04}b", first=first, last=typo, dob=dob))
    profiles.sort(key=lambda p: p.id)
    run = run_blocking("r", profiles, cap=50)
    assert run.sure_pairs == 0
    all_pairs = len(profiles) * (len(profiles) - 1) / 2
    assert run.baseline > baseline(len(profiles), 0) + 4
    assert abs(run.baseline - math.log2(100 / all_pairs)) < 1.0


def _levels(a: Profile, b: Profile) -> list[Level | None]:
    return field_levels(a.values(), b.values())


def test_an_employers_main_line_is_not_a_home() -> None:
    a = Profile("1", first="ann", last="kowal", phone="+15550100", company="acme")
    b = Profile("2", first="ann", last="kowal", phone="+15550100", company="acme",
                email="ann@acme.com")
    levels = _levels(a, b)
    floors = implied_floors(levels, a.email, home=shared_home(levels))
    assert LAST not in floors  # the surname keeps its rarity: coworkers are not a family
    # the same landline with no employer is a home, and explains the surname
    levels = _levels(Profile("1", first="ann", last="kowal", phone="+15550100"),
                     Profile("2", first="ann", last="kowal", phone="+15550100"))
    home = implied_floors(levels, home=shared_home(levels))
    assert home[LAST] == HOUSEHOLD_SURNAME_SHARE


def test_two_contexts_differ_on_their_identifiers_once() -> None:
    work = Profile("1", first="ann", last="kowal", email="ann.kowal@acme.com",
                   phone="+15550100", company="acme", city="boston")
    home = Profile("2", first="ann", last="kowal", email="annk@mail.com", phone="+15559999",
                   company="globex", city="austin")
    counts = [3] * len(FIELDS)
    scorer = Scorer(20_000, THRESHOLDS, -16.0)
    ev = scorer.evaluate("1", work.values(), counts, "2", home.values(), counts)
    against = {f: w for f, w in zip(FIELDS, ev.weights, strict=True)
               if f in ("email", "phone", "company") and w < 0}
    assert len(against) == 1, against  # one move, weighed once: the strongest difference
    assert math.isclose(ev.score, sum(ev.weights) + scorer.baseline, abs_tol=1e-9)


def test_birth_dates_before_1850_are_kept() -> None:
    assert normalize.birth_date("1789-07-14") == "17890714"
    assert normalize.birth_date("1849/12/31") == "18491231"
    assert normalize.birth_date("0000-00-00") == ""
    # A month or day out of range is a mistyped part of a real date, kept to compare;
    # a part of "00" is a placeholder.
    assert normalize.birth_date("1973-19-14") == "19731914"
    assert normalize.birth_date("1980-00-00") == ""
    assert normalize.birth_date("1980-05-00") == ""


def test_a_retyped_date_part_is_a_similar_date_weighed_as_wide_as_its_part() -> None:
    # RLdata10000's duplicates carry one error, often a retyped year, month or day.
    assert field_levels(*(Profile(i, dob=d).values() for i, d in (("a", "19350123"), ("b", "19950123"))))[
        FIELDS.index("dob")
    ] == "similar"
    assert retyped_date_part("19731014", "19731914") is False  # one digit: a plain typo
    assert retyped_date_part("19510817", "19510825") is True
    assert retyped_date_part("19510817", "19520825") is False  # two parts differ
    a = Profile("a", first="hans", last="richter", dob="19921103")
    b = Profile("b", first="hans", last="richter", dob="19511103")
    counts = [1] * len(FIELDS)
    total = 10_000
    pair = Scorer(total, Thresholds(12.0, 0.0), -12.0).score(a, counts, b, counts)
    dob = next(t for t in pair.terms if t.field == "dob")
    assert dob.level == "similar"
    assert dob.weight == pytest.approx(
        math.log2(PRIORS["dob"].similar / (DATE_PART_SPREAD / total))
    )
    assert 0.0 < dob.weight < math.log2(PRIORS["dob"].similar / (PRIORS["dob"].spread / total))
