"""Fields across contexts, counted per CRM (issue 15): counts, priors, scores, the message."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handlers.duplicate_merger.matcher.bands import Thresholds
from handlers.duplicate_merger.matcher.counted import (
    PRIOR_PAIRS,
    AgreementCount,
    context_priors,
    count_contexts,
)
from handlers.duplicate_merger.matcher.levels import field_levels, pair_context
from handlers.duplicate_merger.matcher.profile import FIELDS, Profile
from handlers.duplicate_merger.matcher.scorer import Scorer
from handlers.duplicate_merger.matcher.weights import CONTEXT_PRIORS, OTHER_CONTEXT_PRIORS, PRIORS
from handlers.duplicate_merger.pipeline import (
    MESSAGE_VERSION,
    MessageError,
    decode_message,
    encode_messages,
    run_blocking,
    score_message,
)

THRESHOLDS = Thresholds(automatic=12.0, propose=0.0)


def _person(n: int, *, email: str = "", city: str = "", mobile: str = "", **rest: str) -> Profile:
    return Profile(f"{n:03}", first="ann", last=f"kowal{n // 2}", email=email,
                   mobile=mobile or f"+1512555{n // 2:04}", city=city, **rest)


def _context(a: Profile, b: Profile) -> str:
    return pair_context(field_levels(a.values(), b.values()), a.values(), b.values())


def test_each_pair_of_records_has_one_context() -> None:
    work = Profile("1", email="ann@acme.com", city="austin")
    home = Profile("2", email="annk@gmail.com", city="austin")
    card = Profile("3", city="austin")  # a scanned card: no mailbox, no phone
    at_home = {"house": "4", "street": "elm street"}
    assert _context(work, home) == "other"
    assert _context(work, Profile("4", email="ann@acme.com")) == "one"
    assert _context(work, card) == "unknown"
    assert _context(Profile("5", city="austin"), card) == "one"  # a register: no identifiers
    assert _context(Profile("6", email="ann@acme.com", **at_home),
                    Profile("7", email="annk@gmail.com", **at_home)) == "home"
    assert _context(Profile("8", email="ann@acme.com", phone="+15125550100"),
                    Profile("9", email="annk@gmail.com", phone="+15125550100")) == "home"


def test_only_one_persons_records_are_counted_each_in_its_context() -> None:
    profiles = [
        # One person, a work and a personal record (other contexts): counted, cities differ.
        _person(0, email="ann@acme.com", city="austin"),
        _person(1, email="annk@gmail.com", city="round rock"),
        # One person, one mailbox on both records (one context): not counted.
        _person(2, email="ann1@gmail.com", city="austin"),
        _person(3, email="ann1@gmail.com", city="dallas"),
        # Two contexts agreeing on the city: counted.
        _person(4, email="ann@kelly.com", city="austin"),
        _person(5, email="kowal2@yahoo.com", city="austin"),
        # A card without identifiers beside a work record (unknown): counted.
        _person(6, email="ann@hale.com", city="austin"),
        _person(7, city="austin"),
        # One home, one mailbox: the mailbox counted at the home.
        _person(8, email="ann8@gmail.com", house="4", street="elm street"),
        _person(9, email="ann8@gmail.com", house="4", street="elm street"),
    ]
    counts = count_contexts(profiles, cap=10)
    assert counts["other"]["city"] == AgreementCount(exact=1, similar=0, pairs=2)
    assert counts["other"]["street"] == AgreementCount(0, 0, 0)  # no such record has one
    assert counts["unknown"]["city"] == AgreementCount(1, 0, 1)
    assert counts["home"] == {"email": AgreementCount(1, 0, 1), "mobile": AgreementCount(1, 0, 1)}
    # A mobile held by more contacts than the cap is not one person's.
    shared = [Profile(f"{n}", first="ann", last="kowal", email=f"a{n}@x{n}.com",
                      mobile="+15125550000", city="austin") for n in range(6)]
    assert count_contexts(shared, cap=5)["other"]["city"].pairs == 0


def test_the_mobile_is_counted_over_one_name_and_one_personal_mailbox() -> None:
    home = {"house": "4", "street": "elm street"}
    pair = [Profile("1", first="ann", last="lee", email="ann.lee@gmail.com", mobile="+15125550111",
                    **home),
            Profile("2", first="ann", last="lee", email="ann.lee@gmail.com", mobile="+15125550122",
                    **home)]
    assert count_contexts(pair, cap=10)["home"]["mobile"] == AgreementCount(0, 0, 1)
    assert count_contexts(pair, cap=10)["home"]["email"].pairs == 0  # no shared mobile
    # A role mailbox is an organisation's: it pairs no one.
    role = [Profile(p.id, first="ann", last="lee", email="info@acme.com", mobile=p.mobile, **home)
            for p in pair]
    assert count_contexts(role, cap=10)["home"]["mobile"].pairs == 0


def test_counts_move_the_prior_by_how_many_pairs_they_rest_on() -> None:
    prior = OTHER_CONTEXT_PRIORS["city"]
    assert context_priors({}) == {c: dict(p) for c, p in CONTEXT_PRIORS.items()}
    assert context_priors({})["home"]["email"] == PRIORS["email"]  # uncounted: as documented
    few = context_priors({"other": {"city": AgreementCount(0, 0, 2)}})["other"]["city"]
    many = context_priors({"other": {"city": AgreementCount(50, 10, 1000)}})["other"]["city"]
    assert few.exact == pytest.approx(PRIOR_PAIRS * prior.exact / (PRIOR_PAIRS + 2))
    assert many.exact == pytest.approx((50 + PRIOR_PAIRS * prior.exact) / 1020)
    assert many.similar == pytest.approx((10 + PRIOR_PAIRS * prior.similar) / 1020)
    never = context_priors({"other": {"city": AgreementCount(0, 0, 10**6)}})["other"]["city"]
    assert never.exact > 0.0
    always = context_priors({"home": {"email": AgreementCount(10**6, 0, 10**6)}})
    assert always["home"]["email"].differ > 0.0


def _counts(**held: int) -> list[int]:
    return [held.get(f, 0) for f in FIELDS]


def test_a_crm_whose_people_work_far_from_home_weighs_a_shared_city_less() -> None:
    work = Profile("1", first="ann", last="kowal", email="ann.kowal@acme.com", city="houston")
    home = Profile("2", first="ann", last="kowal", email="annk77@gmail.com", city="houston")
    counts = _counts(first=300, last=20, email=1, city=8000)
    measured = context_priors({"other": {"city": AgreementCount(50, 0, 1000)}})
    default = Scorer(100_000, THRESHOLDS, -18.0).score(work, counts, home, counts)
    counted = Scorer(100_000, THRESHOLDS, -18.0, measured).score(work, counts, home, counts)
    assert counted.score < default.score
    # One context (the same mailbox) keeps the documented priors whatever the counts.
    again = Profile("3", first="ann", last="kowal", email="ann.kowal@acme.com", city="houston")
    assert (Scorer(100_000, THRESHOLDS, -18.0, measured).score(work, counts, again, counts).score
            == Scorer(100_000, THRESHOLDS, -18.0).score(work, counts, again, counts).score)


def test_a_crm_whose_people_keep_one_mailbox_at_home_tells_a_junior_from_a_typo() -> None:
    home = {"first": "robert", "last": "reel", "house": "7782", "street": "eighth drive",
            "postcode": "95850", "city": "sacramento"}
    senior = Profile("1", email="robertreel19@gmail.com", **home)
    junior = Profile("2", email="reel.robert@aol.com", **home)
    counts = _counts(first=900, last=4, email=1, house=3, street=40, postcode=300, city=5000)
    one_mailbox = context_priors({"home": {"email": AgreementCount(480, 1, 487)}})
    default = Scorer(100_000, THRESHOLDS, -18.0).score(senior, counts, junior, counts)
    counted = Scorer(100_000, THRESHOLDS, -18.0, one_mailbox).score(senior, counts, junior, counts)
    assert default.band == "propose" and counted.band == "record_only"
    # The same mailbox at the address says more, not less, where the CRM says it is the rule.
    retyped = Profile("3", email="robertreel19@gmail.com", **home)
    assert (Scorer(100_000, THRESHOLDS, -18.0, one_mailbox).score(senior, counts, retyped, counts)
            .score > Scorer(100_000, THRESHOLDS, -18.0).score(senior, counts, retyped, counts).score)


def test_a_record_without_identifiers_weighs_places_as_the_crm_counts_them() -> None:
    work = Profile("1", first="ann", last="kowal", email="ann.kowal@acme.com", city="houston",
                   house="9", street="oak road")
    card = Profile("2", first="ann", last="kowal", city="dallas", house="12", street="elm street")
    counts = _counts(first=300, last=20, email=1, city=8000, house=40, street=60)
    rarely = context_priors({"unknown": {f: AgreementCount(2, 0, 200) for f in
                                         ("city", "house", "street")}})
    default = Scorer(100_000, THRESHOLDS, -18.0).score(work, counts, card, counts)
    counted = Scorer(100_000, THRESHOLDS, -18.0, rarely).score(work, counts, card, counts)
    assert counted.score > default.score  # a different place says little where it often differs
    against = [t.weight for t in counted.terms if t.field in ("city", "house", "street")]
    assert all(-0.2 < w <= 0.0 for w in against) and min(against) < 0.0  # one move


def _message() -> dict[str, Any]:
    profiles = [
        Profile("a", first="ann", last="kowal", email="ann@acme.com", mobile="+15125550111",
                city="austin"),
        Profile("b", first="ann", last="kowal", email="annk@gmail.com", mobile="+15125550111",
                city="dallas"),
    ]
    (body,) = encode_messages(run_blocking("2026-W32", profiles, cap=50))
    data: dict[str, Any] = json.loads(body)
    return data


def test_the_counts_travel_in_every_block_message_and_are_checked() -> None:
    data = _message()
    contexts = data["contexts"]
    assert data["v"] == MESSAGE_VERSION and contexts["other"]["city"] == [0, 0, 1]
    message = decode_message(json.dumps(data))
    assert message.contexts["other"]["city"] == AgreementCount(0, 0, 1)
    assert message.contexts["home"]["email"] == AgreementCount(0, 0, 0)
    assert score_message(message, THRESHOLDS).pairs  # scored with them
    for broken in (
        {**data, "v": MESSAGE_VERSION - 1},                      # the previous format
        {k: v for k, v in data.items() if k != "contexts"},      # no counts
        {**data, "contexts": {"other": {"city": [2, 0, 1]}}},    # a context missing
        {**data, "contexts": {**contexts, "other": {**contexts["other"], "city": [2, 0, 1]}}},
        {**data, "contexts": {**contexts, "home": {"email": [-1, 0, 1]}}},
        {**data, "contexts": []},
    ):
        with pytest.raises(MessageError):
            decode_message(json.dumps(broken))
