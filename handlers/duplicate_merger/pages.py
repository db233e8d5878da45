"""The pages a reviewer sees: the proposal (both records side by side, what differs marked,
the reason in plain words, Confirm / Not a duplicate in the first screen) and the results,
which name the contacts.

The pages only render: acting takes a POST to a signed, single-use link, so a mail scanner
that fetches links cannot merge anything. Scores are log-odds in bits; a person reads the
odds in words (``confidence``), and the bits stay in the folded "How this was scored" detail.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from handlers.common import html_kit as kit
from handlers.duplicate_merger.matcher import LABELS, split_pair_key

FIELDS = {
    "name": "Name",
    "company": "Company",
    "email": "Email",
    "phone": "Phone",
    "mobile": "Mobile",
    "city": "City",
}
"""The card's keys (``scoring.card``) as a person calls them, in the order shown."""

WITHDRAWN = (
    "One of these two records was merged automatically into another record in the same run, "
    "so this pair is no longer a question. Nothing was changed. The record that was kept is "
    "proposed again next week if it still looks like a duplicate."
)
"""A pair the digest no longer shows (``people``): what happened, and what follows."""
GONE = (
    "Nothing was changed: one of these two records is no longer in HubSpot (merged into another "
    "record, or deleted there). There is nothing left to decide for this pair; the record that "
    "remains is proposed again next week if it still looks like a duplicate."
)
NOT_A_DUPLICATE_NEXT = (
    "It will not be proposed again. If they are one person after all, merge them in HubSpot."
)

_LEVELS = {
    "exact": "the same",
    "similar": "similar",
    "different": "different",
    "swapped": "swapped with the other name",
    "missing": "missing on one side",
}


def names(pair: Mapping[str, Any]) -> dict[str, str]:
    """Contact id -> the name the reviewer knows it by ("contact 101" when the card has none)."""
    low, high = split_pair_key(str(pair["pair_key"]))
    contacts = pair.get("contacts") or {}
    out = {}
    for cid, side in ((low, "low"), (high, "high")):
        name = str((contacts.get(side) or {}).get("name") or "").strip()
        out[cid] = name or f"contact {cid}"
    return out


def who(pair: Mapping[str, Any]) -> str:
    """"Wanda Williams and Wanda Wixlliams"; "Ann Lee (two records)" for one name twice."""
    low, high = split_pair_key(str(pair["pair_key"]))
    n = names(pair)
    a, b = n[low], n[high]
    if a == b:  # one name twice: say there are two (the ids stay in the detail line)
        return f"{a} (two records)"
    return f"{a} and {b}"


def cards(pairs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Contact id -> its card, from the rows of one person's pairs, in id order."""
    found: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        low, high = split_pair_key(str(pair["pair_key"]))
        contacts = pair.get("contacts") or {}
        for cid, side in ((low, "low"), (high, "high")):
            found.setdefault(cid, dict(contacts.get(side) or {}))
    return dict(sorted(found.items(), key=lambda kv: (len(kv[0]), kv[0])))


def everyone(pairs: Iterable[Mapping[str, Any]]) -> str:
    """"Zed Quarrington, Zed Quarington: 3 records": a person's names, each once."""
    found = cards(pairs)
    shown = dict.fromkeys(str(c.get("name") or "").strip() or "no name" for c in found.values())
    return f"{', '.join(shown)}: {len(found)} records"


def company(pair: Mapping[str, Any]) -> str:
    """The company the two records name ("Acme / Acme Ltd" when they differ, "" for none)."""
    contacts = pair.get("contacts") or {}
    found: list[str] = []
    for side in ("low", "high"):
        value = str((contacts.get(side) or {}).get("company") or "").strip()
        if value and value.casefold() not in {f.casefold() for f in found}:
            found.append(value)
    return " / ".join(found)


def reason(pair: Mapping[str, Any]) -> str:
    """The one-line explanation as a sentence: "Same email, same mobile, different first name."."""
    text = str(pair.get("explanation") or "").strip()
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else ""


def _odds(score: float) -> str:
    odds = 2.0 ** abs(score)
    if odds < 1.5:
        return "about even"
    # One significant figure from 100 up: "about 900 to 1" reads faster than "891 to 1".
    rounded = round(odds, -len(str(int(odds))) + 1) if odds >= 100 else round(odds)
    figure = f"{int(rounded):,}"
    return f"about {figure} to 1" if score >= 0 else f"about 1 to {figure}"


def confidence(score: float) -> str:
    """The score in words a person reads without units."""
    if score >= 10:
        word = "Almost certainly one person"
    elif score >= 5:
        word = "Very likely one person"
    elif score >= 2:
        word = "Likely one person"
    elif score >= -1:
        word = "Could be one person or two"
    else:
        word = "Probably two different people"
    return f"{word} (odds {_odds(score)})."


def scoring_detail(pair: Mapping[str, Any]) -> kit.Html:
    """The evidence with its weights in bits, folded away: for whoever asks how."""
    rows = [
        (
            LABELS.get(str(t.get("field")), str(t.get("field"))),
            _LEVELS.get(str(t.get("level")), str(t.get("level"))),
            f"{float(t.get('weight', 0)):+.1f}",
        )
        for t in pair.get("terms") or []
    ]
    table = kit.rows_table(("Field", "Compared", "Bits"), rows, numeric=1)
    band = {"automatic": "merged automatically", "propose": "proposed for review"}.get(
        str(pair.get("band")), str(pair.get("band") or "recorded only")
    )
    return kit.Html(
        "<details class=detail style='margin-top:16px'><summary>How this was scored</summary>"
        + kit.detail(
            f"Score {float(pair.get('score', 0)):+.1f} bits of log-odds ({band}); "
            f"pair {pair['pair_key']}."
        )
        + table
        + "</details>"
    )


def comparison(pair: Mapping[str, Any]) -> kit.Html:
    low, high = split_pair_key(str(pair["pair_key"]))
    contacts = pair.get("contacts") or {}
    left = {**(contacts.get("low") or {}), "id": low}
    right = {**(contacts.get("high") or {}), "id": high}
    return kit.side_by_side(
        {**FIELDS, "id": "HubSpot id"}, left, right, heads=("Record 1", "Record 2"),
        unmarked=frozenset({"id"}),
    )


def undo_window(link_days: int, undo_days: int) -> str:
    """How long a merge can be undone, both limits told: the undo link lives ``link_days``
    (``linkTtlDays``), the undo bundle ``undo_days`` (``undoDays``)."""
    if link_days >= undo_days:
        return f"Merging keeps the older record. You can undo it for {undo_days} days from the page you get after merging."
    return (f"Merging keeps the older record. You can undo it for {link_days} days from the page you "
            f"get after merging (dm keeps what an undo needs for {undo_days} days).")


def proposal(
    pair: Mapping[str, Any], confirm_url: str, reject_url: str, *, chosen: str = "review",
    link_days: int, undo_days: int,
) -> dict[str, Any]:
    """Who, why, how sure, the two records, and the two buttons; ``chosen`` ("confirm" or
    "reject", from the digest's one-tap links) makes that button the main one."""
    body = kit.join(
        (
            kit.para(reason(pair), strong=True),
            kit.para(confidence(float(pair.get("score", 0)))),
            comparison(pair),
            kit.actions(
                kit.button(confirm_url, "Confirm: merge them", primary=chosen != "reject"),
                kit.button(reject_url, "Not a duplicate", primary=chosen == "reject"),
            ),
            kit.detail(undo_window(link_days, undo_days)),
            scoring_detail(pair),
        )
    )
    return kit.page(f"Same person? {who(pair)}", body)


@dataclass(frozen=True)
class Choice:
    """One pair on a person's page: ``decided`` says what became of it, or its two links."""

    pair: Mapping[str, Any]
    decided: str = ""
    confirm: str = ""
    reject: str = ""
    merged_away: tuple[str, str] | None = None
    """(absorbed id, kept id) when another pair's merge took one of this pair's records."""
    still: kit.Html | None = None
    """What can still be done about a decided pair (its undo)."""


def person(choices: Sequence[Choice]) -> dict[str, Any]:
    """One person with three or more records: every record once, then each proposed pair with
    its reason, its odds and its buttons (or what was decided). Ids and bits stay in the detail
    line."""
    rows = [c.pair for c in choices]
    found = cards(rows)
    label = {cid: f"Record {n}" for n, cid in enumerate(found, 1)}
    parts = [kit.para(f"These {len(found)} records look like one person. Decide each pair below; "
                      "merging keeps the older record, and each merge can be undone.")]
    for cid, card in found.items():
        facts = " · ".join(str(card[k]) for k in FIELDS if k != "name" and card.get(k))
        head = kit.esc(f"{label[cid]}: {card.get('name') or 'no name'}")
        parts.append(kit.para(kit.Html(f"<strong>{head}</strong>" + (f"<br>{kit.esc(facts)}" if facts else ""))))
    first = True
    # What is left to decide first (its button in the first screen), then what was decided.
    for choice in sorted(choices, key=lambda c: bool(c.decided or c.merged_away)):
        low, high = split_pair_key(str(choice.pair["pair_key"]))
        parts += [kit.heading(f"{label[low]} and {label[high]}"), kit.para(reason(choice.pair)),
                  kit.para(confidence(float(choice.pair.get("score", 0))))]
        if choice.merged_away:
            gone, kept = choice.merged_away
            into = label.get(kept, "another record")
            parts.append(kit.para(f"{label[gone]} was merged into {into}: nothing left to decide "
                                  "for this pair.", strong=True))
            continue
        if choice.decided:
            parts += [kit.para(choice.decided, strong=True), choice.still or kit.Html("")]
            continue
        parts.append(kit.actions(
            kit.button(choice.confirm, f"Confirm: merge {label[low]} and {label[high]}", primary=first),
            kit.button(choice.reject, "Not a duplicate"),
        ))
        first = False
    ids = ", ".join(f"{label[c]} is HubSpot id {c}" for c in found)
    scores = ", ".join(f"{float(r.get('score', 0)):+.1f}" for r in rows)
    parts.append(kit.detail(f"{ids}; scores {scores} bits of log-odds."))
    return kit.page(f"Same person? {everyone(rows)}", kit.join(parts))


def undo_confirmation(
    merge: Mapping[str, Any], undo_url: str, named: Mapping[str, str]
) -> dict[str, Any]:
    """What undo will do, and its button. ``named`` maps contact ids to names."""
    kept, merged = str(merge.get("kept_id")), str(merge.get("merged_id"))
    two = _two(named, kept, merged)
    body = kit.join(
        (
            kit.para(two.merged, strong=True),
            kit.para(
                f"{two.undo} It can be undone until {day(merge.get('undoable_until'))}."
            ),
            kit.actions(kit.button(undo_url, "Undo this merge", primary=True)),
            kit.detail(f"Merge {merge.get('merge_id')}: HubSpot ids {kept} (kept) and {merged}."),
        )
    )
    return kit.page(f"Undo the merge of {two.both}?", body)


def merged(
    named: Mapping[str, str], kept: str, gone: str, undo_url: str | None, until: str | None
) -> dict[str, Any]:
    """The confirm result: who was merged into whom, and the undo button."""
    two = _two(named, kept, gone)
    parts = [kit.para(two.merged, strong=True)]
    if undo_url:
        parts.append(kit.para(f"Changed your mind? You can undo this until {day(until)}."))
        parts.append(kit.actions(kit.button(undo_url, "Undo this merge")))
    parts.append(kit.detail(f"HubSpot ids {kept} (kept) and {gone} (merged)."))
    return kit.page(f"Merged: {two.title}", kit.join(parts))


def in_progress(about: str, result_url: str, *, undo: bool) -> dict[str, Any]:
    """A click dm-merge took and finishes from its queue (the person does not wait on HubSpot):
    what is happening, and the link (a GET of the same link) that shows the result."""
    done = "the merge is undone" if undo else "they are merged; the undo is offered there"
    body = kit.join((
        kit.para(f"{'Undoing the merge of' if undo else 'Merging'} {about} now.", strong=True),
        # The click waits behind the queue's automatic merges, if the week's run left any.
        kit.para(f"This usually takes a few seconds, longer while the week's automatic merges are "
                 f"still running. See the result to check {done}."),
        kit.actions(kit.button(result_url, "See the result", primary=True, method="get")),
        kit.detail("If HubSpot refuses a change, dm tries the undo again until it is done." if undo else
                   "If HubSpot refuses a change, dm puts back what it changed and tries again."),
    ))
    return kit.page(f"{'Undoing' if undo else 'Merging'}: {about}", body, status=202)


def undo_offer(undo_url: str, until: str) -> kit.Html:
    """What can still be done about a decided merge: its undo, while the link is valid."""
    return kit.join((
        kit.para(f"You can still undo this merge until {day(until)}."),
        kit.actions(kit.button(undo_url, "Undo this merge", method="get")),
    ))


@dataclass(frozen=True)
class _Two:
    """How a merge's pages name its two contacts."""

    undo: str
    """What undo does, in their names."""
    merged: str
    """The sentence saying what was merged into what."""
    both: str
    """Both, after "the merge of"."""
    title: str
    """Both, in a title (``who``'s form)."""


def _two(named: Mapping[str, str], kept: str, gone: str) -> _Two:
    """The kept and the merged contact's names; one name twice is told apart by which record
    was kept, as ``who`` and ``person`` do (the ids stay in the detail line)."""
    a, b = named.get(kept, "a contact"), named.get(gone, "a contact")
    if a != b:
        return _Two(f"Undo brings back {b} and restores {a} as both were before the merge.",
                    f"{b} was merged into {a}.", f"{a} and {b}", f"{a} and {b}")
    return _Two(f"Undo brings back the other {a} record and puts both back as they were before the merge.",
                f"{a}'s two records were merged into one: the older was kept.",
                f"{a}'s two records", f"{a} (two records)")


def result(title: str, message: str, *, about: str | None = None) -> dict[str, Any]:
    """Any other result: ``about`` names the contacts (``who``)."""
    lead = [kit.para(about, strong=True)] if about else []
    return kit.page(title, kit.join((*lead, kit.para(_sentence(message)))))


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def day(value: object) -> str:
    """An ISO date from the merge record as people write it; the value itself otherwise."""
    try:
        return kit.local_day(dt.date.fromisoformat(str(value)[:10]))
    except ValueError:
        return str(value)
