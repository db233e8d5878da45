"""Where rrs keeps people (handlers/common/privacy.py erases and exports them the same way for
all five systems): the sheet's mirror, jobs, requests, their audit trail (every message sent,
every grade) and the opt-out list. After an erasure rrs remembers the person only as salted
hashes of their email and phone on rrs-optout, so a later job of theirs is an opted-out
stranger's. The sheet is the owner's: a row left there comes back at the next sync."""

from __future__ import annotations

from typing import Any

from handlers.common.privacy import Person, SystemStores, Table, remembered_forms
from handlers.review_requests import contract


def _opt_outs(person: Person, salt: str) -> list[tuple[str, dict[str, Any]]]:
    return [(contract.OPTOUT.name, {"contact": f, "source": "forget"}) for f in remembered_forms(person, salt)]


STORES = SystemStores(
    "rrs",
    (
        Table(contract.CUSTOMERS, links=("customer_id",), why="the sheet's mirror"),
        Table(contract.JOBS, links=("customer_id", "request_id", "completion_id"), why="completed jobs"),
        Table(contract.REQUESTS, links=("request_id", "customer_id", "completion_id"), why="review asks"),
        Table(contract.AUDIT, why="every message and grade of a request"),
        Table(contract.OPTOUT, why="opt-outs"),
    ),
    remember=_opt_outs,
)
