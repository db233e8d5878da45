"""Where ls keeps people (handlers/common/privacy.py erases and exports them the same way for
all five systems). ls never stores an email: an enquiry carries the keyed hash of it, so the
search starts from that hash, then follows the enquiry to its visitor ids, their identity links
and their visits. The weekly reports hold counts only. ls remembers nobody: an enquiry they make
later is a stranger's."""

from __future__ import annotations

from handlers.common.privacy import Person, SystemStores, Table, Where
from handlers.source_attributor import contract
from handlers.source_attributor.email_hash import email_hash


def _with_email_hash(person: Person, where: Where) -> Person:
    if not person.emails or where.secret is None:
        return person
    key = where.secret(contract.EMAIL_HASH_KEY).encode()
    return person.with_ids(email_hash(e, key) for e in person.emails)


STORES = SystemStores(
    "ls",
    (
        Table(contract.ENQUIRIES, links=("visitor_id", "enquiry_id"), why="enquiries: email hash, visitor, free text"),
        Table(contract.IDENTITIES, links=("visitor_id",), why="email hash -> visitor (device) links"),
        Table(contract.TOUCHES, why="each visitor's arrivals (browsing path)"),
    ),
    derive=_with_email_hash,
)
