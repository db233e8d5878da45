"""The shared string measures (jellyfish): the standard Jaro-Winkler and NYSIIS, for dm and ler."""

from __future__ import annotations

import pytest

from handlers.common.strings import jaro_winkler, nysiis


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("martha", "marhta", 0.961111),  # Winkler's own examples
        ("dwayne", "duane", 0.84),
        ("dixon", "dicksonx", 0.813333),
        # Three matched characters out of order are one transposition (half of three, rounded
        # down), not 1.5: ler's former measure gave 0.95 and 0.94375 here.
        ("christina", "cihrstina", 0.966667),
        ("nicholas", "nchiolas", 0.9625),
        # Jaro 0.583 is below 0.7, so the common prefix "a" earns no boost (ler's gave 0.625).
        ("ab", "axyz", 0.583333),
        ("abc", "xyz", 0.0),
    ],
)
def test_jaro_winkler_is_the_standard_measure(a: str, b: str, expected: float) -> None:
    assert jaro_winkler(a, b) == pytest.approx(expected, abs=1e-6)
    assert jaro_winkler(b, a) == pytest.approx(expected, abs=1e-6)


def test_jaro_winkler_of_empty_and_equal_strings() -> None:
    assert jaro_winkler("", "") == 0.0
    assert jaro_winkler("ann", "") == 0.0
    assert jaro_winkler("ann", "ann") == 1.0


@pytest.mark.parametrize(
    ("name", "code"),
    [("O'Neil", "ONAL"), ("o neil", "ONAL"), ("Mc-Donald", "MCDANALD"), ("123", ""), ("", "")],
)
def test_nysiis_reads_letters_only(name: str, code: str) -> None:
    assert nysiis(name) == code


def test_dm_and_ler_use_this_one_measure() -> None:
    from handlers.common import strings
    from handlers.duplicate_merger.matcher import levels, profile
    from handlers.lead_enricher import matching

    # each module's own name for it (an import, not a re-export: hence vars)
    assert vars(matching)["jaro_winkler"] is strings.jaro_winkler
    assert vars(levels)["jaro_winkler"] is strings.jaro_winkler
    assert vars(profile)["nysiis"] is strings.nysiis
