"""String similarity for field comparisons: Jaro-Winkler and "at most one edit".

Both are plain Python (the archive vendors nothing compiled) and tuned for the short strings a
contact has: names, postcodes, dates, phone digits.
"""

from __future__ import annotations

from itertools import compress
from operator import ne


def jaro(a: str, b: str) -> float:
    """Jaro similarity in [0, 1]: matching characters within a window, minus transpositions."""
    if a == b:
        return 1.0 if a else 0.0
    la, lb = len(a), len(b)
    if not la or not lb:
        return 0.0
    window = max(max(la, lb) // 2 - 1, 0)
    taken = bytearray(lb)
    matched_a: list[str] = []
    for i, ch in enumerate(a):
        hi = i + window + 1
        j = b.find(ch, i - window if i > window else 0, hi)
        while j != -1 and taken[j]:
            j = b.find(ch, j + 1, hi)
        if j != -1:
            taken[j] = 1
            matched_a.append(ch)
    m = len(matched_a)
    if not m:
        return 0.0
    matched_b = compress(b, taken)
    transpositions: int = sum(map(ne, matched_a, matched_b)) // 2
    return (m / la + m / lb + (m - transpositions) / m) / 3.0


def jaro_winkler(a: str, b: str, *, prefix_scale: float = 0.1, boost_above: float = 0.7) -> float:
    """Jaro-Winkler similarity: a Jaro score above ``boost_above`` is boosted by a common prefix
    of up to four characters (Winkler's rule; low scores are left alone)."""
    score = jaro(a, b)
    if score <= boost_above:
        return score
    prefix = 0
    for x, y in zip(a[:4], b[:4], strict=False):
        if x != y:
            break
        prefix += 1
    return score + prefix * prefix_scale * (1.0 - score)


def within_one_edit(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by at most one insertion, deletion, substitution or
    swap of two adjacent characters (Damerau-Levenshtein distance <= 1)."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la > lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    if la == lb:
        if a[i + 1 :] == b[i + 1 :]:
            return True  # one substitution
        return i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
    return a[i:] == b[i + 1 :]  # one insertion into the shorter string
