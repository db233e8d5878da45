"""String similarity for field comparisons: "at most one edit".

Jaro-Winkler and NYSIIS come from jellyfish through ``handlers.common.strings``. This check
stays here: it is a few comparisons with an early exit on the short strings a contact has
(postcodes, dates, phone digits), cheaper than computing a full edit distance.
"""

from __future__ import annotations


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
