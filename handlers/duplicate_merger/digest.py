"""The weekly digest: the run's proposals with their signed review links, the automatic
merges with their undo links, and the capped blocks, mailed from ``sender_email``.

Sent by dm-merge (on the ``dm-digest-weekly`` schedule) because dm-merge already holds the
link-signing key and serves the links: the key stays in one role, and no other function needs
SES.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

MAX_LISTED = 200


@dataclass(frozen=True)
class DigestItem:
    """One line of the digest: what, why, and the link."""

    pair_key: str
    explanation: str
    score: float
    url: str


@dataclass(frozen=True)
class Digest:
    subject: str
    text: str
    html: str
    proposals: int
    automatic: int


def compose(
    run: Mapping[str, Any] | None,
    proposals: Iterable[DigestItem],
    automatic: Iterable[DigestItem],
    *,
    bands: Sequence[str] = (),
) -> Digest:
    """The digest's subject, plain text and HTML; ``bands`` are the lines saying how the
    reviewer's decisions set the run's bands (``calibration.describe``)."""
    props = list(proposals)[:MAX_LISTED]
    autos = list(automatic)[:MAX_LISTED]
    run_id = str((run or {}).get("run_id", "this week"))
    subject = f"Duplicate contacts {run_id}: {len(props)} to review, {len(autos)} merged automatically"
    lines = [subject, ""]
    html = [f"<h1>{escape(subject)}</h1>"]
    if props:
        lines.append("To review (the link shows the evidence; Confirm or Not a duplicate):")
        html.append("<h2>To review</h2><ol>")
        for item in props:
            lines.append(f"- {item.explanation} ({item.score:+.1f} bits): {item.url}")
            html.append(f"<li><a href='{escape(item.url)}'>{escape(item.explanation)}</a> ({item.score:+.1f} bits)</li>")
        html.append("</ol>")
    if autos:
        lines.append("")
        lines.append("Merged automatically (each can be undone):")
        html.append("<h2>Merged automatically</h2><ol>")
        for item in autos:
            lines.append(f"- {item.explanation}: undo {item.url}")
            html.append(f"<li>{escape(item.explanation)}: <a href='{escape(item.url)}'>undo</a></li>")
        html.append("</ol>")
    if bands:
        lines.append("")
        lines.extend(bands)
        html.append(f"<h2>Bands</h2><p>{escape(bands[0])}</p>")
        if len(bands) > 1:
            html.append("<ul>" + "".join(f"<li>{escape(b)}</li>" for b in bands[1:]) + "</ul>")
    capped = list((run or {}).get("capped") or [])
    if capped:
        count = (run or {}).get("capped_count", len(capped))
        lines.append("")
        lines.append(f"{count} oversized blocks were capped (compared in sorted windows):")
        html.append(f"<h2>{escape(str(count))} capped blocks</h2><ul>")
        for c in capped:
            line = f"{c['key']} {c['value']}: {c['size']} contacts"
            lines.append(f"- {line}")
            html.append(f"<li>{escape(line)}</li>")
        html.append("</ul>")
    if not props and not autos:
        lines.append("Nothing to review this week.")
        html.append("<p>Nothing to review this week.</p>")
    return Digest(subject, "\n".join(lines), "".join(html), len(props), len(autos))


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
