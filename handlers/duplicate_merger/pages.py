"""The HTML a reviewer sees: the proposal (evidence, Confirm / Not a duplicate), the results.

Every value is escaped. The pages only render: acting takes a POST to a signed, single-use
link, so a mail scanner that fetches links cannot merge anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

_STYLE = (
    "body{font:16px/1.4 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}"
    "table{border-collapse:collapse;width:100%}td,th{padding:.3rem .5rem;border-bottom:1px solid #ddd;text-align:left}"
    ".for{color:#1a7f37}.against{color:#b42318}button{font-size:1rem;padding:.5rem 1rem;margin-right:1rem}"
)


def _page(title: str, body: str) -> dict[str, Any]:
    html = (
        f"<!doctype html><html lang=en><meta charset=utf-8><meta name=robots content=noindex>"
        f"<meta name=viewport content='width=device-width'><title>{escape(title)}</title>"
        f"<style>{_STYLE}</style><body><h1>{escape(title)}</h1>{body}</body></html>"
    )
    return {
        "statusCode": 200,
        "headers": {
            "content-type": "text/html; charset=utf-8",
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
            "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
        },
        "body": html,
        "isBase64Encoded": False,
    }


def _card(contact: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in contact.items()
    )
    return f"<table>{rows}</table>"


def proposal(pair: Mapping[str, Any], confirm_url: str, reject_url: str) -> dict[str, Any]:
    """The evidence for one pair and the two buttons."""
    contacts = pair.get("contacts") or {}
    terms = "".join(
        f"<tr class={'for' if t['weight'] >= 0 else 'against'}><td>{escape(str(t['field']))}</td>"
        f"<td>{escape(str(t['level']))}</td><td>{t['weight']:+.1f}</td></tr>"
        for t in pair.get("terms", [])
    )
    body = (
        f"<p><strong>{escape(str(pair.get('explanation', '')))}</strong></p>"
        f"<p>Score {float(pair.get('score', 0)):+.1f} bits ({escape(str(pair.get('band', '')))})</p>"
        f"<h2>Contact {escape(str(pair['pair_key']).split('#')[0])}</h2>{_card(contacts.get('low', {}))}"
        f"<h2>Contact {escape(str(pair['pair_key']).split('#')[1])}</h2>{_card(contacts.get('high', {}))}"
        f"<h2>Evidence</h2><table><tr><th>field</th><th>comparison</th><th>bits</th></tr>{terms}</table>"
        f"<p><form method=post action='{escape(confirm_url)}' style=display:inline>"
        f"<button type=submit>Confirm: merge</button></form>"
        f"<form method=post action='{escape(reject_url)}' style=display:inline>"
        f"<button type=submit>Not a duplicate</button></form></p>"
    )
    return _page("Possible duplicate", body)


def undo_confirmation(merge: Mapping[str, Any], undo_url: str) -> dict[str, Any]:
    body = (
        f"<p>Contact {escape(str(merge.get('merged_id')))} was merged into "
        f"{escape(str(merge.get('kept_id')))}. Undo restores both from the bundle written before "
        f"the merge, until {escape(str(merge.get('undoable_until')))}.</p>"
        f"<form method=post action='{escape(undo_url)}'><button type=submit>Undo this merge</button></form>"
    )
    return _page("Undo a merge", body)


def result(title: str, message: str, undo_url: str | None = None) -> dict[str, Any]:
    extra = (
        f"<form method=post action='{escape(undo_url)}'><button type=submit>Undo</button></form>"
        if undo_url
        else ""
    )
    return _page(title, f"<p>{escape(message)}</p>{extra}")
