"""A pair's key: one row per pair of contacts, whichever way round they were found."""

from __future__ import annotations


def pair_key(a: str, b: str) -> str:
    """``min#max`` of two contact ids: A-B and B-A are one key."""
    if a == b:
        raise ValueError("a contact is not its own duplicate")
    if "#" in a or "#" in b:
        raise ValueError("contact ids may not contain '#'")
    return f"{a}#{b}" if a < b else f"{b}#{a}"


def split_pair_key(key: str) -> tuple[str, str]:
    """The two contact ids of a pair key (low, high); refuses anything else."""
    low, sep, high = key.partition("#")
    if not sep or not low or not high or "#" in high or not low < high:
        raise ValueError(f"{key!r} is not a pair key")
    return low, high
