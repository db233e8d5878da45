"""The rules: walk each enquiry's path, credit first touch and last non-direct touch.

A path is every touch, up to the enquiry's time, of every visitor id linked to the enquiry's
email hash (and always of the device it came from, stitched or not yet). Two modes:

- strict: guessed sources are left out: touches with ``how_detected=none`` (direct visits, where
  nothing told us where the visitor came from) and ``asked`` answers unless asked for;
- lenient: every touch counts.

An enquiry with no qualifying touch for a rule is unattributed under that rule. The
unattributed share is computed here, with the counts, and is always present in the output:
a template that forgets it cannot make the report look complete. Nothing here writes
anything back: the report is computed from the rows as they are (``stored_report`` keeps the
weekly mail's one for its page).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from handlers.source_attributor.records import Enquiry, Touch

Mode = Literal["strict", "lenient"]
RULES = ("first_touch", "last_non_direct")
UNATTRIBUTED_LABEL = "(unattributed)"
"""The CSV label of the unattributed row; no normalised source can contain parentheses."""


def is_guessed(touch: Touch) -> bool:
    """A touch whose source we did not observe: no tag, no referrer, or a self-report."""
    return touch.how_detected == "none" or touch.medium == "asked"


def qualifies(touch: Touch, mode: Mode, include_asked: bool) -> bool:
    """Whether ``touch`` may be credited in ``mode``."""
    if mode == "lenient":
        return True
    if touch.medium == "asked":
        return include_asked
    return touch.how_detected != "none"


def first_touch(path: Sequence[Touch]) -> Touch | None:
    """The earliest touch of a time-ordered path."""
    return path[0] if path else None


def last_non_direct(path: Sequence[Touch]) -> Touch | None:
    """The latest touch of a time-ordered path whose medium is not ``direct``."""
    for touch in reversed(path):
        if touch.medium != "direct":
            return touch
    return None


@dataclass(frozen=True)
class RuleResult:
    """Counts for one rule: enquiries credited per source, and those credited to nothing."""

    sources: dict[str, int]
    unattributed: int


@dataclass(frozen=True)
class Report:
    """One report: which enquiries, under which mode, credited how."""

    start: dt.date
    end: dt.date
    mode: Mode
    include_asked: bool
    enquiries: int
    rules: dict[str, RuleResult]

    def share(self, count: int) -> float:
        """``count`` as a share of all enquiries (0 when there are none)."""
        return round(count / self.enquiries, 4) if self.enquiries else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "range": {"from": self.start.isoformat(), "to": self.end.isoformat()},
            "mode": self.mode,
            "include_asked": self.include_asked,
            "enquiries": self.enquiries,
            "rules": {
                name: {
                    "sources": [
                        {"source": source, "enquiries": n, "share": self.share(n)}
                        for source, n in _ranked(result.sources)
                    ],
                    "unattributed": {
                        "enquiries": result.unattributed,
                        "share": self.share(result.unattributed),
                    },
                }
                for name, result in self.rules.items()
            },
        }

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> Report:
        """The report ``to_json`` wrote (shares are derived again, not read)."""
        mode: Mode = "lenient" if document["mode"] == "lenient" else "strict"
        return cls(
            start=dt.date.fromisoformat(document["range"]["from"]),
            end=dt.date.fromisoformat(document["range"]["to"]),
            mode=mode,
            include_asked=bool(document["include_asked"]),
            enquiries=int(document["enquiries"]),
            rules={
                name: RuleResult(
                    {s["source"]: int(s["enquiries"]) for s in rule["sources"]},
                    int(rule["unattributed"]["enquiries"]),
                )
                for name, rule in document["rules"].items()
            },
        )

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["rule", "source", "enquiries", "share"])
        for name, result in self.rules.items():
            for source, n in _ranked(result.sources):
                writer.writerow([name, source, n, f"{self.share(n):.4f}"])
            writer.writerow(
                [name, UNATTRIBUTED_LABEL, result.unattributed,
                 f"{self.share(result.unattributed):.4f}"]
            )
        return out.getvalue()


def _ranked(counts: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def path_for(enquiry: Enquiry, touches: Iterable[Touch]) -> list[Touch]:
    """The enquiry's path: touches up to and including its time, oldest first."""
    return sorted(
        (t for t in touches if t.at <= enquiry.at), key=lambda t: (t.at, t.visitor_id)
    )


def attribute(
    enquiries: Sequence[Enquiry],
    touches_of: Callable[[Enquiry], Iterable[Touch]],
    *,
    start: dt.date,
    end: dt.date,
    mode: Mode,
    include_asked: bool = False,
) -> Report:
    """Apply both rules to every enquiry; ``touches_of`` gives all touches of its identity."""
    include_asked = include_asked or mode == "lenient"
    credited = {rule: Counter[str]() for rule in RULES}
    unattributed = dict.fromkeys(RULES, 0)
    for enquiry in enquiries:
        path = [t for t in path_for(enquiry, touches_of(enquiry))
                if qualifies(t, mode, include_asked)]
        for rule, pick in (("first_touch", first_touch), ("last_non_direct", last_non_direct)):
            touch = pick(path)
            if touch is None:
                unattributed[rule] += 1
            else:
                credited[rule][touch.source] += 1
    return Report(
        start=start,
        end=end,
        mode=mode,
        include_asked=include_asked,
        enquiries=len(enquiries),
        rules={rule: RuleResult(dict(credited[rule]), unattributed[rule]) for rule in RULES},
    )
