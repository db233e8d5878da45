"""What ler-rescue shows a person: the confirm page, the done page and every refusal.

Built from ``handlers.common.html_kit`` like every page: one column for a phone, the lead named
in words (who, company, how it came in, when and why it was dropped, what they wrote), one
button that says what it does, times in the business's zone. A refusal is a page for a browser
and the JSON error for a program (``html_kit.answer``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from handlers.common import html_kit as kit
from handlers.common.function_url import Request
from handlers.lead_enricher.junk_words import (
    LANES,
    address_of,
    company_of,
    cut,
    name_of,
    reason_words,
    who,
)

MESSAGE_CHARS = 600


@dataclass(frozen=True)
class Dropped:
    """One junk object as the pages name it."""

    key: str
    etag: str
    entry: dict[str, Any]

    @property
    def lead(self) -> dict[str, Any]:
        lead = self.entry.get("lead")
        return lead if isinstance(lead, dict) else {}

    @property
    def who(self) -> str:
        """The person in words: "Jane Doe (jane@acme.example)", or whichever is known."""
        return who(self.lead)

    @property
    def name(self) -> str:
        """The name for a title or a button: the person's name, else their address."""
        return name_of(self.lead) or address_of(self.lead) or "this lead"

    @property
    def rescue(self) -> Mapping[str, Any] | None:
        found = self.entry.get("rescue")
        return found if isinstance(found, Mapping) else None


def when(moment: str, zone: str) -> str:
    """An ISO time as the business reads it; the text as given when it is not one."""
    try:
        return kit.local_time(dt.datetime.fromisoformat(moment), zone)
    except ValueError:
        return moment


def about(dropped: Dropped, zone: str) -> kit.Html:
    """Who, from where, when, why dropped and what they wrote: the facts a person judges."""
    lead = dropped.lead
    lane = str(dropped.entry.get("lane") or lead.get("lane") or "")
    reason = str(dropped.entry.get("reason") or "unknown")
    rows: list[tuple[str, str | kit.Html]] = [
        ("Who", dropped.who),
        ("Came in by", LANES.get(lane, lane or "unknown")),
        ("Dropped", when(str(dropped.entry.get("dropped_at") or ""), zone)),
        ("Why", reason_words(reason)),
    ]
    company = company_of(lead)
    if company:
        rows.insert(1, ("Company", company))
    message = cut(str(lead.get("message") or ""), MESSAGE_CHARS)
    if message:
        rows.append(("They wrote", kit.Html(f"&ldquo;{kit.esc(message)}&rdquo;")))
    body = "".join(
        f"<tr><th scope=row style='width:30%'>{kit.esc(label)}</th>"
        f"<td>{value if isinstance(value, kit.Html) else kit.esc(value)}</td></tr>"
        for label, value in rows
    )
    return kit.Html(f"<table>{body}</table>")


def confirm(dropped: Dropped, action: str, zone: str) -> dict[str, Any]:
    """The GET page: the lead and one button that POSTs to ``action``."""
    # The name only: the address is in the table below, and on a phone it wraps over lines.
    intro = kit.para(f"The junk filter dropped {dropped.name}. If this is a real lead, send it "
                     "back: it goes through the lead enricher again and into your CRM, and "
                     "will not be dropped again.")
    button = kit.actions(kit.button(action, f"Send {dropped.name} to the CRM", primary=True))
    return kit.page(f"Rescue {dropped.name}?", kit.join((intro, button, about(dropped, zone))))


def done(dropped: Dropped, by: str, at: str, zone: str) -> dict[str, Any]:
    return kit.page(
        f"Sent back: {dropped.name}",
        kit.join((
            kit.para(f"{dropped.name} is going through the lead enricher again and will "
                     "reach your CRM in a few minutes.", strong=True),
            kit.para(f"Recorded as rescued by {by} on {when(at, zone)}."),
            about(dropped, zone),
        )),
    )


def already(request: Request, dropped: Dropped, zone: str) -> dict[str, Any]:
    rescue = dropped.rescue or {}
    by = str(rescue.get("by") or "someone")
    at = when(str(rescue.get("at") or ""), zone)
    return kit.answer(request, 409, "already_rescued", f"Already rescued: {dropped.name}",
                      f"{dropped.who} was already rescued by {by} on {at}. Nothing more to do.")


def busy(request: Request, dropped: Dropped) -> dict[str, Any]:
    return kit.answer(request, 409, "busy", "Busy: try again in a minute",
                      f"{dropped.who} is being changed by someone else. Try again in a minute.")


def failed(request: Request, dropped: Dropped) -> dict[str, Any]:
    return kit.answer(request, 503, "rescue_failed", "Not sent: nothing changed",
                      f"{dropped.who} could not be sent back just now. Nothing changed and the "
                      "link still works: try again in a few minutes.")


def expired(request: Request) -> dict[str, Any]:
    return kit.answer(request, 410, "link_expired", "This rescue link has expired",
                      "This rescue link has expired. The lead is still kept in the junk log; "
                      "ask whoever runs the lead enricher to send it back.")


def invalid(request: Request) -> dict[str, Any]:
    return kit.answer(request, 403, "invalid_link", "This link is not valid",
                      "This link is not valid: it may have been cut or changed. Open it again "
                      "from the junk digest mail.")


def unconfirmed(request: Request, dropped: Dropped, action: str) -> dict[str, Any]:
    """A POST without a confirmation the page issued a few seconds before: what a mail
    scanner that submits forms sends. A person gets the button again."""
    button = kit.actions(kit.button(action, f"Send {dropped.name} to the CRM", primary=True))
    return kit.answer(request, 409, "not_confirmed", f"Press again to rescue {dropped.name}",
                      f"Nothing was sent: press the button below to send {dropped.name} back.",
                      more=button)
