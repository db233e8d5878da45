"""Place agreement across contexts, counted per CRM (issue 15): counts, priors, the message."""

from __future__ import annotations

import json

import pytest

from handlers.duplicate_merger.contexts import (
    PRIOR_PAIRS,
    PlaceCount,
    context_priors,
    count_places,
)
from handlers.duplicate_merger.evidence import OTHER_CONTEXT_PRIORS, Scorer, Thresholds
from handlers.duplicate_merger.pipeline import (
    MessageError,
    decode_message,
    encode_messages,
    run_blocking,
    score_message,
)
from handlers.duplicate_merger.profile import FIELDS, Profile

THRESHOLDS = Thresholds(automatic=12.0, propose=0.0)


def _person(n: int, *, email: str, city: str, mobile: str = "") -> Profile:
    return Profile(f"{n:03}", first="ann", last=f"kowal{n // 2}", email=email,
                   mobile=mobile or f"+1512555{n // 2:04}", city=city)


def test_only_one_persons_records_of_two_contexts_are_counted() -> None:
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
    ]
    counts = count_places(profiles, cap=10)
    assert counts["city"] == PlaceCount(exact=1, similar=0, pairs=2)
    assert counts["street"] == PlaceCount(0, 0, 0)  # no record has one
    # A mobile held by more contacts than the cap is not one person's.
    shared = [_person(n, email=f"a{n}@x{n}.com", city="austin", mobile="+15125550000")
              for n in range(6)]
    assert count_places([Profile(p.id, first="ann", last="kowal", email=p.email,
                                 mobile=p.mobile, city=p.city) for p in shared],
                        cap=5)["city"].pairs == 0


def test_counts_move_the_prior_by_how_many_pairs_they_rest_on() -> None:
    prior = OTHER_CONTEXT_PRIORS["city"]
    assert context_priors({}) == dict(OTHER_CONTEXT_PRIORS)
    few = context_priors({"city": PlaceCount(0, 0, 2)})["city"]
    many = context_priors({"city": PlaceCount(50, 10, 1000)})["city"]
    assert few.exact == pytest.approx(PRIOR_PAIRS * prior.exact / (PRIOR_PAIRS + 2))
    assert many.exact == pytest.approx((50 + PRIOR_PAIRS * prior.exact) / 1020)
    assert many.similar == pytest.approx((10 + PRIOR_PAIRS * prior.similar) / 1020)
    assert context_priors({"city": PlaceCount(0, 0, 10**6)})["city"].exact > 0.0


def test_a_crm_whose_people_work_far_from_home_weighs_a_shared_city_less() -> None:
    work = Profile("1", first="ann", last="kowal", email="ann.kowal@acme.com", city="houston")
    home = Profile("2", first="ann", last="kowal", email="annk77@gmail.com", city="houston")
    counts = [{"first": 300, "last": 20, "email": 1, "city": 8000}.get(f, 0) for f in FIELDS]
    measured = context_priors({"city": PlaceCount(50, 0, 1000)})
    default = Scorer(100_000, THRESHOLDS, -18.0).score(work, counts, home, counts)
    counted = Scorer(100_000, THRESHOLDS, -18.0, measured).score(work, counts, home, counts)
    assert counted.score < default.score
    # One context (the same mailbox) keeps the documented priors whatever the counts.
    again = Profile("3", first="ann", last="kowal", email="ann.kowal@acme.com", city="houston")
    assert (Scorer(100_000, THRESHOLDS, -18.0, measured).score(work, counts, again, counts).score
            == Scorer(100_000, THRESHOLDS, -18.0).score(work, counts, again, counts).score)


def _message() -> dict[str, object]:
    profiles = [
        Profile("a", first="ann", last="kowal", email="ann@acme.com", mobile="+15125550111",
                city="austin"),
        Profile("b", first="ann", last="kowal", email="annk@gmail.com", mobile="+15125550111",
                city="dallas"),
    ]
    (body,) = encode_messages(run_blocking("2026-W32", profiles, cap=50))
    data: dict[str, object] = json.loads(body)
    return data


def test_the_counts_travel_in_every_block_message_and_are_checked() -> None:
    data = _message()
    assert data["v"] == 4 and data["places"]["city"] == [0, 0, 1]  # type: ignore[index]
    message = decode_message(json.dumps(data))
    assert message.places["city"] == PlaceCount(0, 0, 1)
    assert score_message(message, THRESHOLDS).pairs  # scored with them
    for broken in (
        {**data, "v": 3},                                       # the previous format
        {k: v for k, v in data.items() if k != "places"},       # no counts
        {**data, "places": {"city": [2, 0, 1]}},                # more agree than were counted
        {**data, "places": {**data["places"], "city": [-1, 0, 1]}},  # type: ignore[dict-item]
        {**data, "places": []},
    ):
        with pytest.raises(MessageError):
            decode_message(json.dumps(broken))
