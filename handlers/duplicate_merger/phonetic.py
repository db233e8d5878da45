"""NYSIIS, the New York State Identification and Intelligence System phonetic code.

Why a local encoder: the blocking key "phonetic surname + first initial" needs a phonetic code
that runs on Lambda arm64, and the archive can vendor only pure-Python distributions. The
maintained encoders (jellyfish) are compiled; the pure-Python ones on PyPI (metaphone,
pyphonetics, phonetics, abydos) have had no release for years. NYSIIS is short, fully
specified (Taft, 1970), and in record-linkage studies it keeps more name variants together than
Soundex while splitting fewer unrelated names, so it is written here and tested against fixed
vectors (and, where the benchmark environment has it, against jellyfish's implementation).

The variant is the untruncated one jellyfish uses (no six-character limit), so a long rare
surname keeps its rarity.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("AEIOU")

_FIRST = (("MAC", "MCC"), ("KN", "NN"), ("K", "C"), ("PH", "FF"), ("PF", "FF"), ("SCH", "SSS"))
_LAST = (("EE", "Y"), ("IE", "Y"), ("DT", "D"), ("RT", "D"), ("RD", "D"), ("NT", "D"), ("ND", "D"))


def _letters(name: str) -> str:
    return "".join(ch for ch in name.upper() if "A" <= ch <= "Z")


@lru_cache(maxsize=200_000)
def nysiis(name: str) -> str:
    """The NYSIIS code of ``name`` (letters A-Z only are read; empty in, empty out)."""
    word = _letters(name)
    if not word:
        return ""
    for old, new in _FIRST:
        if word.startswith(old):
            word = new + word[len(old) :]
            break
    for old, new in _LAST:
        if word.endswith(old):
            word = word[: -len(old)] + new
            break
    code = [word[0]]
    i, size = 1, len(word)
    while i < size:
        ch = word[i]
        nxt = word[i + 1] if i + 1 < size else ""
        prev = word[i - 1]
        piece = ch
        if ch == "E" and nxt == "V":
            piece, i = "AF", i + 1
        elif ch in _VOWELS:
            piece = "A"
        elif ch == "Q":
            piece = "G"
        elif ch == "Z":
            piece = "S"
        elif ch == "M":
            piece = "N"
        elif ch == "K":
            piece = "N" if nxt == "N" else "C"
        elif ch == "S" and word[i + 1 : i + 3] == "CH":
            piece, i = "SS", i + 2
        elif ch == "P" and nxt == "H":
            piece, i = "F", i + 1
        elif ch == "H" and (prev not in _VOWELS or not nxt or nxt not in _VOWELS):
            piece = "A" if prev in _VOWELS else prev
        elif ch == "W" and prev in _VOWELS:
            piece = prev
        if piece[-1] != code[-1][-1]:
            code.append(piece)
        i += 1
    key = "".join(code)
    if len(key) > 1 and key.endswith("S"):
        key = key[:-1]
    if key.endswith("AY"):
        key = key[:-2] + "Y"
    if len(key) > 1 and key.endswith("A"):
        key = key[:-1]
    return key
