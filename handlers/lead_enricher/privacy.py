"""Where ler keeps people (handlers/common/privacy.py erases and exports them the same way for
all five systems): every version of each raw original (form payload, mail, CSV upload) in
ler-raw, the normalised and clean records, dropped leads, and the identity index. An upload's
report lists every row's fate: it keeps the others' rows. The identity rows of the contact
(its CRM id) go with them, so a new lead of theirs is a stranger's. ler remembers the person
as salted hashes of their email and phone with the erasure time (``forgotten#`` rows on
ler-identity), so a lead of theirs received before it, still in flight, is dropped
(``forgotten_leads``)."""

from __future__ import annotations

from typing import Any

from handlers.common.clock import utc_now
from handlers.common.privacy import Bucket, Person, SystemStores, Table, remembered_forms
from handlers.lead_enricher import contract


def _forgotten(person: Person, salt: str) -> list[tuple[str, dict[str, Any]]]:
    now = int(utc_now().timestamp())
    expires = now + contract.FORGOTTEN_KEEP_DAYS * 86_400
    return [
        (contract.IDENTITY.name, {"id_key": f, "forgotten_at": now, contract.IDENTITY_TTL: expires})
        for f in remembered_forms(person, salt)
    ]


STORES = SystemStores(
    "ler",
    (
        Table(contract.IDENTITY, links=("crm_id",), why="email, phone and name keys -> CRM contact"),
        Bucket(contract.RAW_BUCKET, links=("lead_id",), shared=(contract.REPORT_PREFIX,), why="raw originals, every version"),
        Bucket(contract.RECORDS_BUCKET, links=("lead_id", "crm_id"), why="normalised and clean records"),
        Bucket(contract.JUNK_BUCKET, links=("lead_id",), why="dropped leads"),
    ),
    remember=_forgotten,
)
