"""The weekly digest: each proposal with both names, the reason in plain words, the odds in
words and its signed Confirm / Not a duplicate / review links; the automatic merges with their
names and undo links; then, as detail, the bands and the capped blocks. Mailed from
``sender_email`` with a plain-text and an HTML part.

Sent by dm-merge (on the ``dm-digest-weekly`` schedule) because dm-merge already holds the
link-signing key and serves the links: the key stays in one role, and no other function needs
SES.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from handlers.common import html_kit as kit
from handlers.duplicate_merger import pages
from handlers.duplicate_merger.matcher import LABELS, split_pair_key

MAX_LISTED = 200


@dataclass(frozen=True)
class DigestItem:
    """One pair of the digest: who, why, how sure, and its links.

    A proposal has ``review`` (both records), ``confirm`` and ``reject``; an automatic merge
    has ``undo``. Each link opens a page whose one button acts (a POST): a mail scanner that
    fetches every link changes nothing.
    """

    pair_key: str
    who: str
    """Both names ("Wanda Williams and Wanda Wixlliams"), from ``pages.who``."""
    company: str
    reason: str
    """The evidence as a sentence (``pages.reason``)."""
    confidence: str
    """The odds in words (``pages.confidence``)."""
    score: float
    review: str = ""
    confirm: str = ""
    reject: str = ""
    undo: str = ""
    records: int = 2
    """Records of the person: from three up the item has only ``review``, the person's page
    (a decision per pair there)."""


@dataclass(frozen=True)
class Notice:
    """Something the owner should know that is not one of the run's pairs (a merge the sweep
    finished or put back, an address a merge could not keep, a merge waiting for a person):
    what happened and what to do, in words, with an optional link."""

    what: str
    todo: str
    link: str = ""
    link_label: str = ""


@dataclass(frozen=True)
class Digest:
    subject: str
    text: str
    html: str
    proposals: int
    automatic: int


def _heading(item: DigestItem) -> str:
    return f"{item.who} · {item.company}" if item.company else item.who


def _proposal_html(item: DigestItem, first: bool) -> kit.Html:
    if item.records > 2:
        return kit.Html(
            f"<li style='margin-bottom:20px'><strong>{kit.esc(_heading(item))}</strong><br>"
            f"{kit.esc(item.reason)}<br>{kit.esc(item.confidence)}"
            + kit.actions(kit.button(item.review, f"See all {item.records} records and decide",
                                     primary=first, method="get"))
            + f"<span class=detail style='color:{kit.MUTED};font-size:14px'> "
            f"(best score {item.score:+.1f} bits)</span></li>"
        )
    return kit.Html(
        f"<li style='margin-bottom:20px'><strong>{kit.esc(_heading(item))}</strong><br>"
        f"{kit.esc(item.reason)}<br>{kit.esc(item.confidence)}"
        + kit.actions(
            kit.button(item.confirm, "Confirm: merge them", primary=first, method="get"),
            kit.button(item.reject, "Not a duplicate", method="get"),
        )
        + f"{kit.link(item.review, 'See both records side by side')}"
        + f"<span class=detail style='color:{kit.MUTED};font-size:14px'> "
        f"(score {item.score:+.1f} bits)</span></li>"
    )


def compose(
    run: Mapping[str, Any] | None,
    proposals: Iterable[DigestItem],
    automatic: Iterable[DigestItem],
    *,
    bands: Sequence[str] = (),
    notices: Iterable[Notice] = (),
) -> Digest:
    """The digest's subject, plain text and HTML; ``bands`` are the lines saying how the
    reviewer's decisions set the run's bands (``calibration.describe``), shown as detail;
    ``notices`` come first, each with what to do."""
    props = list(proposals)[:MAX_LISTED]
    autos = list(automatic)[:MAX_LISTED]
    notes = list(notices)[:MAX_LISTED]
    subject = (f"Duplicate contacts {_week(run)}: {len(props)} to review, {len(autos)} merged "
               "automatically")
    if notes:
        subject += f", {len(notes)} to look at"
    lines = [subject, ""]
    html: list[str] = []
    if notes:
        lines.append("To look at: what happened since the last digest, and what to do.")
        html.append("<h2>To look at</h2><ol>")
        for n, note in enumerate(notes, 1):
            lines += [f"{n}. {note.what}", f"   What to do: {note.todo}"]
            if note.link:
                lines.append(f"   {note.link_label}: {note.link}")
            lines.append("")
            more = kit.link(note.link, note.link_label) if note.link else ""
            html.append(
                f"<li style='margin-bottom:20px'>{kit.esc(note.what)}<br>"
                f"<strong>What to do:</strong> {kit.esc(note.todo)}"
                + (f"<br>{more}" if more else "") + "</li>"
            )
        html.append("</ol>")
    if props:
        lines.append("To review: each link opens a page with one button.")
        html.append("<h2>To review</h2><ol>")
        for n, item in enumerate(props, 1):
            links = [f"   See all {item.records} records and decide: {item.review}"] if (
                item.records > 2) else [
                f"   Confirm, merge them: {item.confirm}",
                f"   Not a duplicate: {item.reject}",
                f"   See both records: {item.review}",
            ]
            lines += [
                f"{n}. {_heading(item)}",
                f"   {item.reason}",
                f"   {item.confidence}",
                *links,
                f"   Detail: score {item.score:+.1f} bits",
                "",
            ]
            html.append(_proposal_html(item, n == 1))
        html.append("</ol>")
    if autos:
        lines.append("Merged automatically (each can be undone):")
        html.append("<h2>Merged automatically</h2><ol>")
        for n, item in enumerate(autos, 1):
            lines += [
                f"{n}. {_heading(item)}",
                f"   {item.reason}",
                f"   Undo this merge: {item.undo}",
                "",
            ]
            html.append(
                f"<li><strong>{kit.esc(_heading(item))}</strong><br>{kit.esc(item.reason)}<br>"
                f"{kit.link(item.undo, f'Undo the merge of {item.who}')}</li>"
            )
        html.append("</ol>")
    if not props and not autos and not notes:
        lines.append("Nothing to review this week.")
        html.append(kit.para("Nothing to review this week."))
    details: list[str] = []
    if run and run.get("run_id"):  # the run's name ("2026-W32") is for whoever reads the logs
        lines += ["", f"Detail: run {run['run_id']}"]
        details.append(f"<p>Run {kit.esc(str(run['run_id']))}</p>")
    if bands:
        lines.append("")
        lines.extend(f"Detail: {b}" for b in bands)
        details.append(f"<h2>Bands</h2><p>{kit.esc(bands[0])}</p>")
        if len(bands) > 1:
            details.append("<ul>" + "".join(f"<li>{kit.esc(b)}</li>" for b in bands[1:]) + "</ul>")
    capped = list((run or {}).get("capped") or [])
    if capped:
        count = (run or {}).get("capped_count", len(capped))
        lines.append("")
        groups = "1 very large group was" if count == 1 else f"{count} very large groups were"
        lines.append(f"Detail: {groups} compared in sorted windows only:")
        details.append(f"<h2>{kit.esc(groups)} compared in sorted windows only</h2><ul>")
        for c in capped:
            label = LABELS.get(str(c["key"]), str(c["key"]))
            line = f"{c['size']} contacts share the {label} {c['value']}"
            lines.append(f"Detail: - {line}")
            details.append(f"<li>{kit.esc(line)}</li>")
        details.append("</ul>")
    if details:
        html.append(f"<div class=detail style='color:{kit.MUTED};font-size:14px'>{''.join(details)}</div>")
    m = kit.mail(subject, lines, kit.join(html))
    return Digest(m.subject, m.text, m.html, len(props), len(autos))


def _week(run: Mapping[str, Any] | None) -> str:
    """"week of Mon 3 Aug 2026" from the run's start; "this week" without one."""
    try:
        return f"week of {kit.local_day(dt.date.fromisoformat(str((run or {})['started_at'])[:10]))}"
    except (KeyError, ValueError):
        return "this week"


def _names(pair_key: str, pair: Mapping[str, Any] | None) -> tuple[str, dict[str, str]]:
    """(both names, id -> name) from the pair's row; ids alone when the row has expired."""
    if pair:
        return pages.who(pair), pages.names(pair)
    low, high = split_pair_key(pair_key)
    return f"contacts {low} and {high}", {}


def notices(
    notes: Iterable[Mapping[str, Any]],
    stuck: Iterable[tuple[str, Mapping[str, Any]]],
    pair_of: Callable[[str], Mapping[str, Any] | None],
    undo_link: Callable[[str], str],
) -> list[Notice]:
    """The digest's words for the week's notes (``merging.Notes``: a claim the sweep finished
    or put back, addresses a merge could not keep) and for each merge stopped for a person
    (``merging.stuck``), each with what to do."""
    found: list[Notice] = []
    for note in notes:
        pair_key = str(note.get("pair_key") or "")
        who, names = _names(pair_key, pair_of(pair_key))
        if note.get("kind") == "emails_not_added":
            kept = names.get(str(note["kept_id"]), f"contact {note['kept_id']}")
            absorbed = names.get(str(note["merged_id"]), f"contact {note['merged_id']}")
            emails = ", ".join(str(e) for e in note.get("emails") or [])
            found.append(Notice(
                f"{who} were merged ({absorbed} into {kept}), but HubSpot refused to keep "
                f"{emails} on {kept} as a secondary email.",
                f"In HubSpot, open {kept} and add {emails} as a secondary email, so that mail "
                f"from that address still finds {kept}.",
            ))
            continue
        by = str(note.get("by") or "automatic")
        started = "merged automatically" if by == "automatic" else f"confirmed by {by}"
        if note.get("claim") == "undoing":
            found.append(Notice(
                f"Undoing the merge of {who} stopped part way; the automatic check finished it: "
                "both contacts are back as they were.",
                "Nothing: the pair now counts as not a duplicate and is not proposed again.",
            ))
        elif note.get("status") == "merged":
            found.append(Notice(
                f"The merge of {who} ({started}) stopped part way; the automatic check finished it.",
                "Nothing, unless they should not have been merged: then undo it.",
                undo_link(str(note["merge_id"])), f"Undo the merge of {who}",
            ))
        elif note.get("status") == "rolled_back":
            found.append(Notice(
                f"The merge of {who} ({started}) stopped part way; the automatic check put both "
                "contacts back as they were.",
                "Nothing was merged. To merge them, use the Confirm link again (it works again); "
                "a pair found by the weekly run is tried again after its next run.",
            ))
    for pair_key, record in stuck:
        who, _ = _names(pair_key, pair_of(pair_key))
        attention = str(record.get("attention") or "").strip().rstrip(".")
        found.append(Notice(
            f"The merge of {who} stopped where a contact may already have been re-created: "
            f"{attention}.",
            "Check HubSpot as this says and remove any second copy. Until this is resolved "
            "nothing else changes either contact, and every digest lists it here.",
        ))
    return found


def send(ses: Any, sender: str, recipient: str, digest: Digest) -> str:
    """SendEmail (simple content, text and HTML); returns the SES message id."""
    answer = ses.send_email(
        Source=sender,
        Destination={"ToAddresses": [recipient]},
        Message={
            "Subject": {"Data": digest.subject, "Charset": "UTF-8"},
            "Body": {
                "Text": {"Data": digest.text, "Charset": "UTF-8"},
                "Html": {"Data": digest.html, "Charset": "UTF-8"},
            },
        },
    )
    return str(answer["MessageId"])


LinkMaker = Callable[[str, str], str]
"""(action, subject) -> an absolute signed URL."""
