"""The one bound on model-written text that reaches a customer (an rrs ask, an upsr pitch).

A model's words are data, never trusted: the facts it was given may carry instructions planted
by whoever controls a field (a job note, an order note, a product title), and a model may follow
them. So before any model text is sent, :func:`refusals` looks for what no such text may carry
unless the facts themselves did (a product title that is itself "Tent 2P"): links and web
addresses, email addresses, phone numbers, prices and currency amounts, discount codes,
promises (discounts, refunds, rewards, guarantees, free things, deadlines), instructions (to
click, call, reply, pay, or to ignore rules) and markup. Any refusal means the caller sends its
fixed template instead; the reasons go to the audit or the log.

The facts allowed are the trusted values the caller names (the business's name, the product's
catalogue title, the customer's first name), compared case-insensitively as whole spans: an
instruction planted in a note is never a fact to echo.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_CHECKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "link",
        re.compile(
            r"(https?:|//|\bwww\.|\b[a-z0-9-]+\.(?:com|co|uk|net|org|io|page|ly|me|biz|info|app|"
            r"link|site|gl|to|us|eu|shop|store|online|xyz)\b)",
            re.IGNORECASE,
        ),
    ),
    ("email_address", re.compile(r"\S+@\S+")),
    ("phone_number", re.compile(r"\+?\d[\d\s().-]{6,}\d")),
    (
        "price",
        re.compile(
            r"([£$€¥]\s?\d|\d+(?:[.,]\d+)?\s?(?:gbp|usd|eur|pounds?|quid|dollars?|euros?|pence)\b"
            r"|\b(?:gbp|usd|eur)\s?\d|\d+\s?%|\bper\s?cent\b|\bpercent\b|\bhalf[- ]price\b)",
            re.IGNORECASE,
        ),
    ),
    (
        "discount_code",
        re.compile(
            r"(\b(?:promo|discount|voucher|coupon|offer)?\s?codes?\b|\b[a-z]{3,}[0-9]{2,}\b)",
        ),
    ),
    (
        "promise",
        re.compile(
            r"\b(discounts?|vouchers?|coupons?|refunds?|rewards?|prizes?|gift\s?cards?|"
            r"giveaways?|(?<![-\w])free(?![-\w])|complimentary|cashback|guarantee[sd]?|"
            r"promise[sd]?|compensat\w*|money\s?back|in\s+return|incentives?|raffle|draw|win|"
            r"today\s+only|limited\s+time|last\s+chance|hurry|expires?|deal|sale|save|"
            r"on\s+us|no\s+charge)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "instruction",
        re.compile(
            r"(\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:previous|prior|above|earlier|"
            r"instructions?|rules?|prompt)\b|\b(?:system\s+prompt|instructions?|as\s+an\s+ai)\b|"
            r"\b(?:click|tap|press|call|phone|ring|text|whatsapp|email|e-mail|visit|go\s+to|"
            r"log\s*in|sign\s*(?:in|up)|register|send|transfer|pay|reply|respond)\s+"
            r"(?:us|me|here|now|this|the|your|our|to|with|at|back|it)\b|"
            r"\b(?:reply|respond|text)\s+(?:yes|no|y|n|stop|start)\b|"
            r"\buse\s+(?:the\s+|this\s+|my\s+)?code\b)",
            re.IGNORECASE,
        ),
    ),
    ("markup", re.compile(r"[<>{}\[\]]|\*\*|__|```")),
)
"""Each refusal reason and what it finds; the order is the order reasons are reported in."""


def _fold(text: str) -> str:
    """Case- and width-folded, control and format characters as spaces, spaces collapsed."""
    plain = "".join(
        " " if unicodedata.category(ch)[0] == "C" else ch
        for ch in unicodedata.normalize("NFKC", text)
    )
    return " ".join(plain.split()).casefold()


def refusals(text: str, facts: Iterable[str] = ()) -> list[str]:
    """Every reason ``text`` may not reach a customer (empty: it may).

    ``facts``: the trusted values the text may repeat; a match lying wholly inside one of them,
    where it appears in ``text``, is not a refusal.
    """
    folded = _fold(text)
    spans: list[tuple[int, int]] = []
    for fact in {_fold(f) for f in facts if f and f.strip()}:
        start = folded.find(fact)
        while start != -1:
            spans.append((start, start + len(fact)))
            start = folded.find(fact, start + 1)
    return [
        reason
        for reason, pattern in _CHECKS
        if any(
            not any(a <= m.start() and m.end() <= b for a, b in spans)
            for m in pattern.finditer(folded)
        )
    ]
