"""rrs decisions without AWS: windows, due times, contacts, the gate, the signal."""

from __future__ import annotations

import datetime as dt
import sys
import zoneinfo
from collections.abc import Iterator
from zoneinfo import ZoneInfo

import pytest

from handlers.review_requests.contacts import (
    InvalidContact,
    can_receive_sms,
    normalise_contact,
    normalise_email,
    normalise_phone,
)
from handlers.review_requests.domain import Band, Customer, Purpose, purpose_for, request_id_for
from handlers.review_requests.gate import capture_signal, choose_channel, decide, merge_customer
from handlers.review_requests.timing import NoZoneData, Window, due_time, iso, parse_iso, zone

LONDON = zone("Europe/London", "UTC")
SYDNEY = zone("Australia/Sydney", "UTC")
HOURS = Window("09:00", "18:00")


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> dt.datetime:
    return dt.datetime(year, month, day, hour, minute, tzinfo=dt.UTC)


def test_window_reads_hours_in_the_given_zone_across_summer_time() -> None:
    # 08:30 UTC is 09:30 in London in June (BST) but 08:30 in January (GMT).
    assert HOURS.contains(utc(2026, 6, 10, 8, 30), LONDON)
    assert not HOURS.contains(utc(2026, 1, 14, 8, 30), LONDON)
    assert HOURS.next_open(utc(2026, 1, 14, 8, 30), LONDON) == utc(2026, 1, 14, 9, 0)


def test_next_open_after_closing_is_tomorrow_morning_where_the_customer_is() -> None:
    # 18:30 London -> 09:00 London next day (08:00 UTC in summer).
    assert HOURS.next_open(utc(2026, 6, 10, 17, 30), LONDON) == utc(2026, 6, 11, 8, 0)
    # 10:00 UTC is 20:00 in Sydney: next morning 09:00 Sydney is 23:00 UTC the same day.
    assert HOURS.next_open(utc(2026, 6, 10, 10, 0), SYDNEY) == utc(2026, 6, 10, 23, 0)


def test_due_time_is_delay_after_completion_moved_into_opening_hours() -> None:
    now = utc(2026, 6, 10, 15, 0)  # 16:00 London
    due = due_time(
        utc(2026, 6, 10, 14, 30), delay=dt.timedelta(hours=2), window=HOURS, tz=LONDON, now=now
    )
    assert due == utc(2026, 6, 10, 16, 30)  # 17:30 London, inside
    late = due_time(
        utc(2026, 6, 10, 16, 30), delay=dt.timedelta(hours=2), window=HOURS, tz=LONDON, now=now
    )
    assert late == utc(2026, 6, 11, 8, 0)  # 19:30 London -> 09:00 next day


def test_due_time_is_never_in_the_past_for_a_late_webhook() -> None:
    now = utc(2026, 6, 10, 12, 0)
    due = due_time(
        utc(2026, 6, 9, 9, 0), delay=dt.timedelta(hours=2), window=HOURS, tz=LONDON, now=now
    )
    assert now < due <= now + dt.timedelta(minutes=3)


def test_iso_round_trips_and_naive_timestamps_are_refused() -> None:
    moment = utc(2026, 6, 10, 8, 30)
    assert iso(moment) == "2026-06-10T08:30:00Z"
    assert parse_iso("2026-06-10T09:30:00+01:00") == moment
    with pytest.raises(ValueError):
        parse_iso("2026-06-10T08:30:00")


def test_unknown_zone_falls_back() -> None:
    assert zone("Mars/Olympus", "Europe/London").key == "Europe/London"


@pytest.fixture
def no_system_zones() -> Iterator[None]:
    """No system zone database (an image without /usr/share/zoneinfo); restored afterwards."""
    zoneinfo.reset_tzpath(to=[])
    ZoneInfo.clear_cache()
    try:
        yield
    finally:
        zoneinfo.reset_tzpath()
        ZoneInfo.clear_cache()


def test_without_the_system_database_zones_come_from_tzdata(no_system_zones: None) -> None:
    """The functions vendor tzdata: the customer's zone still decides the window."""
    london = zone("Europe/London", "UTC")
    assert london.key == "Europe/London"
    assert HOURS.contains(utc(2026, 6, 10, 8, 30), london)  # 09:30 BST


def test_without_any_zone_data_it_fails_loudly_not_in_utc(
    no_system_zones: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "tzdata" or m.startswith("tzdata.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tzdata", None)  # makes "import tzdata..." fail
    with pytest.raises(NoZoneData, match="tzdata"):
        zone("Europe/London", "Europe/London")


def test_contacts_are_normalised_so_opt_outs_match() -> None:
    assert normalise_email("  Ann@Example.ORG ") == "ann@example.org"
    assert normalise_phone("07911 123456", "GB") == "+447911123456"
    assert normalise_phone("+44 (0)7911-123456", "US") == "+447911123456"
    assert normalise_contact("07911123456", "GB") == normalise_contact("+447911123456", "GB")
    for bad in ("not-an-address@", "12345", "ann@localhost"):
        with pytest.raises(InvalidContact):
            normalise_contact(bad, "GB")


def test_only_mobiles_get_sms() -> None:
    assert can_receive_sms("+447911123456")
    assert not can_receive_sms("+442079460000")  # a London landline


def test_request_id_is_deterministic_and_schedule_safe() -> None:
    first = request_id_for("job/42?x=1")
    assert first == request_id_for("job/42?x=1") != request_id_for("job/43")
    assert len(first) <= 64 and all(c.isalnum() or c in "-_." for c in first)


def test_only_happy_points_at_the_review() -> None:
    assert purpose_for(Band.HAPPY) is Purpose.REVIEW
    assert purpose_for(Band.NEUTRAL) is Purpose.FEEDBACK
    assert purpose_for(Band.UNHAPPY) is Purpose.FEEDBACK


def test_event_details_overlay_the_sheet() -> None:
    stored = Customer("c-1", name="Ann Smith", email="old@example.org", prior_sentiment="positive")
    merged = merge_customer(
        "c-1", stored, {"email": "New@Example.org", "phone": "07911123456", "channel": "sms"}, "GB"
    )
    assert merged.email == "new@example.org"
    assert merged.phone == "+447911123456"
    assert merged.channel == "sms" and merged.prior_sentiment == "positive"
    assert merge_customer("c-1", stored, {"email": "garbage"}, "GB").email == "old@example.org"


def test_channel_preference_falls_back_to_what_works() -> None:
    assert choose_channel(
        Customer("c", email="a@example.org", phone="+447911123456", channel="sms")
    ) == ("sms", "+447911123456")
    assert choose_channel(
        Customer("c", email="a@example.org", phone="+442079460000", channel="sms")
    ) == ("email", "a@example.org")
    assert choose_channel(Customer("c", phone="+442079460000")) == (None, None)


def test_gate_lists_every_reason() -> None:
    now = utc(2026, 6, 10, 10, 0)
    ok = decide(Customer("c", email="a@example.org"), opted_out=None, completed_at=now, now=now)
    assert ok.eligible and ok.reasons == ()
    blocked = decide(
        Customer("c", do_not_ask=True),
        opted_out="a@example.org",
        completed_at=now - dt.timedelta(days=30),
        now=now,
    )
    assert not blocked.eligible
    assert set(blocked.reasons) == {
        "no_usable_contact",
        "opted_out",
        "excluded_in_sheet",
        "completion_too_old",
    }


def test_signal_prefers_the_event_and_falls_back_to_history() -> None:
    customer = Customer("c", prior_sentiment="negative", past_complaints=2)
    fresh = capture_signal({"rating": 5, "notes": "  lovely   work "}, customer)
    assert fresh.source == "event" and fresh.rating == 5 and fresh.notes == "lovely work"
    assert fresh.prior_sentiment == "negative" and fresh.past_complaints == 2
    history = capture_signal(None, customer)
    assert history.source == "history" and history.rating is None
    assert capture_signal({}, Customer("c")).source == "none"
