"""dm's forecast at a portal's size (``make plan``, ``make preflight``): HubSpot calls, hours,
invocations, and where the deployed weekly run stops fitting."""

from __future__ import annotations

import pytest

from handlers.duplicate_merger import capacity, reading

SINGLE = {"split_above": 10**9, "partition_contacts": 5_000}
"""The settings of a run never split: what dm-block alone can block."""
DEFAULTS = {"split_above": 500_000, "partition_contacts": 5_000}
"""``systems.dm``'s defaults."""


def test_the_full_read_is_a_list_call_per_hundred_contacts_at_a_quarter_second() -> None:
    found = capacity.forecast(10_000_000, **DEFAULTS)
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
    found = capacity.forecast(contacts, **SINGLE)
    assert found.fits is fits and not found.split
    assert (reading.block_reserve(contacts) <= 300 - reading.SAVE_RESERVE_S) is fits


def test_a_weeks_changes_page_within_the_search_limits() -> None:
    found = capacity.forecast(1_000_000, **DEFAULTS)
    changed = 50_000  # 5 % of the portal
    assert found.search_calls == changed // capacity.SEARCH_PAGE == 250
    assert found.search_queries == changed // capacity.SEARCH_RESULTS == 5
    assert found.search_hours * 3600 == pytest.approx(250 * 0.25)  # four a second, under five


def test_plan_lines_warn_first_when_it_does_not_fit_and_ask_for_the_size_when_unknown() -> None:
    assert capacity.plan_lines(None, **DEFAULTS) == [capacity.UNKNOWN]
    assert capacity.plan_lines(2_000_000, **SINGLE)[0].startswith("warning: dm at 2,000,000 contacts")
    assert not capacity.plan_lines(100_000, **DEFAULTS)[0].startswith("warning")


@pytest.mark.parametrize(
    ("contacts", "fits"), [(600_000, True), (2_000_000, True), (6_000_000, True), (7_000_000, False)]
)
def test_above_split_above_the_run_splits_and_fits_while_the_read_does(contacts: int, fits: bool) -> None:
    """Issue 43: a split run's invocations hold a partition whatever the size; what still
    bounds it is the checkpointed read's 60 invocations (``reading.MAX_STEPS``)."""
    found = capacity.forecast(contacts, **DEFAULTS)
    assert found.split and found.fits is fits
    assert found.split_partitions == -(-contacts // 5_000)
    assert (found.read_invocations <= reading.MAX_STEPS) is fits
    assert "blocking split (above splitAbove)" in found.lines()[0]
    assert capacity.forecast(400_000, **DEFAULTS).split is False


def test_a_week_on_average_is_one_full_read_and_the_weeks_of_changes_between() -> None:
    found = capacity.forecast(1_000_000, full_every=4, **SINGLE)
    assert found.average_calls == (10_000 + 3 * 250) / 4
    assert capacity.forecast(1_000_000, full_every=1, **SINGLE).average_calls == 10_000
    # above splitAbove there is no stored index: every week is a full read
    assert capacity.forecast(1_000_000, full_every=4, **DEFAULTS).average_calls == 10_000
    table = capacity.markdown_table()
    assert "| 100,000 | 1,000, 0.07 h | 25, 1, 6 s | 269, 0.02 h |" in table
    assert "| 10,000,000 | 100,000, 6.94 h | none: above splitAbove every week is a full read " in table
