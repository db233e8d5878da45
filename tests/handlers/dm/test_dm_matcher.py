"""The matcher without AWS: keys, caps, rarity, evidence, explanations, determinism."""

from __future__ import annotations

import random

import pytest

from handlers.common.strings import jaro_winkler, nysiis
from handlers.duplicate_merger import normalize
from handlers.duplicate_merger.blocking import KEY_NAMES, form_blocks, keys_of
from handlers.duplicate_merger.evidence import Scorer, Thresholds, pair_key, split_pair_key
from handlers.duplicate_merger.pipeline import (
    MAX_MESSAGE_BYTES,
    MessageError,
    decode_message,
    encode_messages,
    profiles_from,
    run_blocking,
    score_message,
)
from handlers.duplicate_merger.profile import Profile
from handlers.duplicate_merger.similarity import within_one_edit
from handlers.duplicate_merger.synthetic import generate

THRESHOLDS = Thresholds(automatic=12.0, propose=0.0)

# Vectors checked against jellyfish 1.3 (nysiis, jaro_winkler_similarity) on this machine.
NYSIIS = {
    "MacDonald": "MCDANALD",
    "Knight": "NAGT",
    "Schmidt": "SNAD",
    "Evans": "EVAN",
    "Phillips": "FALAP",
    "Catherine": "CATARAN",
    "Kathryn": "CATRYN",
    "Smith": "SNAT",
    "Schwartz": "SWART",
    "": "",
}


@pytest.mark.parametrize(("name", "code"), sorted(NYSIIS.items()))
def test_nysiis_vectors(name: str, code: str) -> None:
    assert nysiis(name) == code


def test_jaro_winkler_and_one_edit() -> None:
    assert jaro_winkler("martha", "marhta") == pytest.approx(0.9611111, abs=1e-6)
    assert jaro_winkler("dwayne", "duane") == pytest.approx(0.84, abs=1e-6)
    assert jaro_winkler("", "") == 0.0
    assert within_one_edit("smith", "smiht") and within_one_edit("smith", "smth")
    assert not within_one_edit("smith", "smyhte")


def test_normalisation_of_what_duplicates_differ_in() -> None:
    assert normalize.email("John.Smith+crm@GoogleMail.com") == "johnsmith@gmail.com"
    assert normalize.email("a.b+x@acme.io") == "a.b@acme.io"
    assert normalize.phone("(415) 555-0132") == normalize.phone("+1 415.555.0132") == "+14155550132"
    assert normalize.phone("+44 20 7946 0958") == "+442079460958"
    assert normalize.given_name("Bob") == normalize.given_name("Robert") == "robert"
    assert normalize.company("ACME, Inc.") == normalize.company("Acme") == "acme"
    assert normalize.street("12 Main St.") == ("12", "main street")


def test_pair_keys_are_order_independent() -> None:
    assert pair_key("200", "100") == pair_key("100", "200") == "100#200"
    assert split_pair_key("100#200") == ("100", "200")
    for bad in ("200#100", "100", "1#1", "#1"):
        with pytest.raises(ValueError):
            split_pair_key(bad)
    with pytest.raises(ValueError):
        pair_key("7", "7")


def test_a_and_b_score_the_same_either_way_round() -> None:
    a = Profile("1", first="ann", last="lee", email="ann@x.io", phone="+14155550100")
    b = Profile("2", first="ann", last="lee", email="ann.lee@y.io", phone="+14155550100")
    counts = [3] * 12
    scorer = Scorer(1000, THRESHOLDS, -12.0)
    one, two = scorer.score(a, counts, b, counts), scorer.score(b, counts, a, counts)
    assert one == two and one.pair_key == "1#2"


def test_four_keys_per_contact_at_most() -> None:
    rich = Profile(
        "1", first="ann", last="lee", email="a@x.io", phone="+1415", street="main street",
        house="1", dob="19800101", postcode="2000",
    )
    keys = keys_of(rich)
    assert len(keys) == len(KEY_NAMES) and sum(bool(k) for k in keys) == 4
    assert keys[:3] == ("a@x.io", "+1415", "LY.a")


def test_a_placeholder_phone_block_is_capped_and_reported() -> None:
    shared = [
        Profile(str(1000 + i), first=f"p{i:03d}", last=f"q{i:03d}", phone="+15555555555")
        for i in range(400)
    ]
    blocks, report = form_blocks(shared, cap=50)
    phone_blocks = [b for b in blocks if b.key == "phone"]
    assert all(len(b.members) <= 50 for b in phone_blocks)
    assert sum(b.pair_count for b in phone_blocks) < 400 * 24  # not 79,800
    (capped,) = [c for c in report.capped if c.key == "phone"]
    assert (capped.value, capped.size) == ("+15555555555", 400)
    assert capped.windows == len(phone_blocks)
    covered = {m for b in phone_blocks for m in b.members}
    assert covered == set(range(400))  # nobody silently dropped


def test_rare_agreement_weighs_more_than_common() -> None:
    scorer = Scorer(10_000, THRESHOLDS, -14.0)
    a, b = Profile("1", last="zyborski"), Profile("2", last="zyborski")
    rare = scorer.score(a, [0, 2] + [0] * 10, b, [0, 2] + [0] * 10)
    common = scorer.score(a, [0, 900] + [0] * 10, b, [0, 900] + [0] * 10)
    assert rare.terms[0].weight > common.terms[0].weight > 0
    assert "rare surname" in rare.explanation and "common surname" in common.explanation


def test_disagreement_is_evidence_against_and_explained() -> None:
    scorer = Scorer(10_000, THRESHOLDS, -14.0)
    a = Profile("1", first="ann", last="lee", phone="+14155550100")
    b = Profile("2", first="zoe", last="lee", phone="+14155550100")
    pair = scorer.score(a, [50, 3, 0, 2] + [0] * 8, b, [40, 3, 0, 2] + [0] * 8)
    assert pair.explanation == "same phone, different first name, same rare surname"
    assert [a.reason for a in pair.against] == ["different first name"]
    first = next(t for t in pair.terms if t.field == "first")
    assert not first.agreed and first.weight < 0
    assert pair.band == "record_only"  # relatives on one landline are not one person


def test_swapped_names_count_as_agreement() -> None:
    scorer = Scorer(1000, THRESHOLDS, -10.0)
    a = Profile("1", first="lachlan", last="berry", dob="19990219")
    b = Profile("2", first="berry", last="lachlan", dob="19990219")
    pair = scorer.score(a, [2, 2] + [0] * 9 + [2], b, [2, 2] + [0] * 9 + [2])
    assert {t.level for t in pair.terms if t.field in ("first", "last")} == {"swapped"}
    assert "first and last name swapped" in pair.explanation
    assert pair.band == "automatic"


def _run(contacts: list[tuple[str, dict[str, str]]]) -> dict[str, tuple[float, str, str]]:
    profiles = profiles_from(contacts)
    blocking = run_blocking("2026-W05", profiles, cap=50)
    out: dict[str, tuple[float, str, str]] = {}
    for body in encode_messages(blocking):
        assert len(body.encode()) <= MAX_MESSAGE_BYTES
        for cand in score_message(decode_message(body), THRESHOLDS).pairs:
            s = cand.scored
            out[s.pair_key] = (s.score, s.band, s.explanation)
    return out


def test_same_data_any_order_gives_the_same_pairs_scores_and_bands() -> None:
    contacts = generate(1500, seed=3).contacts
    shuffled = contacts[:]
    random.Random(1).shuffle(shuffled)
    first, second = _run(contacts), _run(shuffled)
    assert first == second and first
    assert all("#" in k and k.split("#")[0] < k.split("#")[1] for k in first)


def test_generated_duplicates_are_found_with_high_precision() -> None:
    generated = generate(3000, seed=5)
    truth = generated.true_pairs()
    found = _run(generated.contacts)
    proposed = {tuple(k.split("#")) for k, (_, band, _) in found.items() if band != "record_only"}
    tp = len(proposed & truth)
    assert tp / len(proposed) > 0.9 and tp / len(truth) > 0.85


def test_a_malformed_message_is_refused() -> None:
    for body in ("nope", "{}", '{"v": 1}', '{"v": 2, "profiles": []}'):
        with pytest.raises(MessageError):
            decode_message(body)
