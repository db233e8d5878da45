"""String measures shared by dm and ler: Jaro-Winkler similarity and the NYSIIS code.

Both come from jellyfish (https://github.com/jamesturk/jellyfish, maintained, Rust core), so
the two systems measure names the same, standard way: Jaro's matching window and half the
out-of-order matches counted as whole transpositions, then Winkler's boost of up to four
common prefix characters only when Jaro is above 0.7. jellyfish is compiled: function
archives carry its python3.14 arm64 wheel pinned in uv.lock (components/wheels.py).
"""

from __future__ import annotations

from functools import lru_cache

import jellyfish


def jaro_winkler(a: str, b: str) -> float:
    """Jaro-Winkler similarity in [0, 1]; 0 when either string is empty."""
    return float(jellyfish.jaro_winkler_similarity(a, b)) if a and b else 0.0


def _letters(name: str) -> str:
    return "".join(ch for ch in name.upper() if "A" <= ch <= "Z")


@lru_cache(maxsize=200_000)
def nysiis(name: str) -> str:
    """The NYSIIS code of ``name``, untruncated; only the letters A-Z are read ("" for none).

    jellyfish codes every character it is given, so spaces, hyphens and digits are dropped
    first: ``O'Neil`` and ``ONeil`` get one code.
    """
    word = _letters(name)
    return str(jellyfish.nysiis(word)) if word else ""
