"""Where upsr keeps people (handlers/common/privacy.py erases and exports them the same way for
all five systems): order markers and baskets, offers with the nudge's contact, the purchase
history and nudge stamps, and the opt-out list. After an erasure upsr remembers the person
only as salted hashes on upsr-optout, so a later order of theirs is an opted-out stranger's."""

from __future__ import annotations

from typing import Any

from handlers.common.forgotten import salted
from handlers.common.privacy import Person, SystemStores, Table
from handlers.upsell_recommender import contract


def _opt_outs(person: Person, salt: str) -> list[tuple[str, dict[str, Any]]]:
    forms = {salted(v, salt) for v in (*person.emails, *person.phones, *person.ids)}
    return [(contract.OPTOUT.name, {"customer_id": f, "source": "forget"}) for f in sorted(forms)]


STORES = SystemStores(
    "upsr",
    (
        Table(contract.ORDERS, links=("order_id", "customer_id"), why="order markers and baskets"),
        Table(contract.OFFERS, links=("offer_id", "order_id", "customer_id"), why="offers and the nudge's contact"),
        Table(contract.CUSTOMERS, links=("customer_id",), why="purchase history, nudge stamps"),
        Table(contract.OPTOUT, why="opt-outs"),
    ),
    remember=_opt_outs,
)
