"""dm's forecast at a portal's size (``make plan``, ``make preflight``): HubSpot calls, hours,
invocations, and where the deployed weekly run stops fitting."""

from __future__ import annotations

import pytest

from handlers.duplicate_merger import capacity, reading


def test_the_full_read_is_a_list_call_per_hundred_contacts_at_a_quarter_second() -> None:
    found = capacity.forecast(10_000_000)
    assert found.list_calls == 100_000
    assert found.list_hours == pytest.approx(6.94, abs=0.01)  # the "about 7 hours"


@pytest.mark.parametrize(
    ("contacts", "fits"),
    [(100_000, True), (1_000_000, True), (1_150_000, True), (1_170_000, False), (10_000_000, False)],
)
def test_the_deployed_run_fits_while_dm_block_can_block_in_one_invocation(
    contacts: int, fits: bool
) -> None:
    """dm-block blocks only when ``block_reserve`` is left of its 300 s, after the save reserve
    (``reading.read_step``): above 1.16M contacts that is more than the 270 s it has."""
    found = capacity.forecast(contacts)
    assert found.fits is fits
    assert (reading.block_reserve(contacts) <= 300 - reading.SAVE_RESERVE_S) is fits


def test_a_weeks_changes_page_within_the_search_limits() -> None:
    found = capacity.forecast(1_000_000)
    changed = 50_000  # 5 % of the portal
    assert found.search_calls == changed // capacity.SEARCH_PAGE == 250
    assert found.search_queries == changed // capacity.SEARCH_RESULTS == 5
    assert found.search_hours * 3600 == pytest.approx(250 * 0.25)  # four a second, under five


def test_plan_lines_warn_first_when_it_does_not_fit_and_ask_for_the_size_when_unknown() -> None:
    assert capacity.plan_lines(None) == [capacity.UNKNOWN]
    assert capacity.plan_lines(2_000_000)[0].startswith("warning: dm at 2,000,000 contacts")
    assert not capacity.plan_lines(100_000)[0].startswith("warning")


def test_a_week_on_average_is_one_full_read_and_the_weeks_of_changes_between() -> None:
    found = capacity.forecast(1_000_000, full_every=4)
    assert found.average_calls == (10_000 + 3 * 250) / 4
    assert capacity.forecast(1_000_000, full_every=1).average_calls == 10_000  # every week in full
    table = capacity.markdown_table()
    assert "| 10,000,000 | 100,000, 6.94 h | 2,500, 50, 10 min | 26,875, 1.87 h |" in table
