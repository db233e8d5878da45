"""Where ler keeps people (handlers/common/privacy.py erases and exports them the same way for
all five systems): every version of each raw original (form payload, mail, CSV upload) in
ler-raw, the normalised and clean records, dropped leads, and the identity index. An upload's
report lists every row's fate: it keeps the others' rows. The identity rows of the contact
(its CRM id) go with them, so a new lead of theirs is a stranger's."""

from __future__ import annotations

from handlers.common.privacy import Bucket, SystemStores, Table
from handlers.lead_enricher import contract

STORES = SystemStores(
    "ler",
    (
        Table(contract.IDENTITY, links=("crm_id",), why="email, phone and name keys -> CRM contact"),
        Bucket(contract.RAW_BUCKET, links=("lead_id",), shared=(contract.REPORT_PREFIX,), why="raw originals, every version"),
        Bucket(contract.RECORDS_BUCKET, links=("lead_id", "crm_id"), why="normalised and clean records"),
        Bucket(contract.JUNK_BUCKET, links=("lead_id",), why="dropped leads"),
    ),
)
