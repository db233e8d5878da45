"""SMS length as carriers bill it: GSM-7 septets, 160 to one segment.

A message whose every character is in the GSM 03.38 alphabet is sent in GSM-7: 160 septets fit
one segment, an extension character (``€ [ ] { } \\ ~ ^ |``) takes two. One character outside
it (a curly quote, an emoji) sends the whole message as UCS-2, 70 characters a segment
(AWS End User Messaging SMS, "SMS character limits",
https://docs.aws.amazon.com/sms-voice/latest/userguide/sms-limitations-character.html).
The codec is the ``gsm0338`` package.
"""

from __future__ import annotations

import unicodedata

import gsm0338  # noqa: F401  (registers the gsm03.38 codec)

SEGMENT = 160
"""GSM-7 septets in one single-part SMS."""


def gsm7_septets(text: str) -> int | None:
    """The septets ``text`` takes in GSM-7; None when a character forces UCS-2."""
    try:
        return len(text.encode("gsm03.38"))
    except UnicodeEncodeError:
        return None


def fits_one_segment(text: str) -> bool:
    septets = gsm7_septets(text)
    return septets is not None and septets <= SEGMENT


_PLAIN = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2013": "-", "\u2014": "-",
    "\u2026": "...", "\u00a0": " ", "\u2009": " ", "\u202f": " ",
})


def to_gsm7(text: str) -> str:
    """``text`` in the GSM-7 alphabet: typographic quotes and dashes made plain, accents the
    alphabet lacks dropped from their letter (NFKD), anything else left out. One emoji in a
    product title would otherwise send the whole message as UCS-2, 70 characters a segment."""
    out = []
    for ch in text.translate(_PLAIN):
        if gsm7_septets(ch) is not None:
            out.append(ch)
            continue
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if gsm7_septets(c) is not None)
        out.append(base)
    return " ".join("".join(out).split())
