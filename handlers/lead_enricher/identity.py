"""ler-identity: the dedupe index. Reads for ler-dedupe, writes for ler-push only.

Rows: ``id_key`` (typed key, see ``matching``) -> ``crm_id``, ``person_name``, ``company``,
``source``, ``updated_at``. Blocking rows (``NEAR#...``) hold a string set ``crm_ids``
instead, so they stay out of the ``by-crm-id`` index. ``LEAD#<lead_id>`` rows are push's
claims: which lead (and pass) already reached the CRM, and as which contact.

Writes never repoint a key that names another contact: the CRM is the source of truth, and
only the nightly re-sync from its export (``resync_contact``) may move a key.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from handlers.common import cold_path
from handlers.common.aws_clients import table
from handlers.common.transitions import condition_failed
from handlers.lead_enricher.contract import IDENTITY_TTL
from handlers.lead_enricher.matching import Profile

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table


class IdentityIndex:
    """GetItem / Query (dedupe) and conditional PutItem / UpdateItem (push)."""

    def __init__(self, table_name: str, index_name: str, *, keep_days: int = 0) -> None:
        """``keep_days``: how long a row lives after this writer's last write (the TTL);
        0 for a reader (ler-dedupe), which may not write."""
        self.table_name = table_name
        self.index_name = index_name
        self.keep_days = keep_days

    def expires_at(self, now: dt.datetime) -> int:
        """The TTL a write at ``now`` gives its row: each write moves it, so a contact the
        pushes and the nightly re-sync still see stays, and one gone from the CRM expires."""
        if self.keep_days <= 0:
            raise ValueError("this ler-identity handle is read-only (no keep_days)")
        return int((now + dt.timedelta(days=self.keep_days)).timestamp())

    @property
    def table(self) -> Table:
        return table(self.table_name)

    # Reads (ler-dedupe) -------------------------------------------------------------------

    def get(self, id_key: str) -> dict[str, Any] | None:
        item = self.table.get_item(Key={"id_key": id_key}).get("Item")
        return dict(item) if item else None

    def rows_of(self, crm_id: str) -> list[dict[str, Any]]:
        """Every key row of one contact, through the crm_id index."""
        conditions = cold_path.load("boto3.dynamodb.conditions")

        rows: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "IndexName": self.index_name,
            "KeyConditionExpression": conditions.Key("crm_id").eq(crm_id),
        }
        while True:
            page = self.table.query(**kwargs)
            rows.extend(dict(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return rows
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def drop_contact(self, crm_id: str) -> int:
        """Delete every key row of a contact the CRM deleted for good, so the lead's keys point
        at the contact it becomes; how many went."""
        rows = self.rows_of(crm_id)
        for row in rows:
            self.table.delete_item(Key={"id_key": row["id_key"]})
        return len(rows)

    def profile(self, crm_id: str) -> Profile:
        """What the index knows of one contact, for fuzzy scoring."""
        found = Profile(crm_id=crm_id)
        newest = ""
        for row in self.rows_of(crm_id):
            key = str(row["id_key"])
            if key.startswith("EMAIL#"):
                found.emails.add(key.removeprefix("EMAIL#"))
            elif key.startswith("PHONE#"):
                found.phones.add(key.removeprefix("PHONE#"))
            updated = str(row.get("updated_at", ""))
            if updated >= newest and (row.get("person_name") or row.get("company")):
                newest = updated
                found.name = str(row.get("person_name") or found.name)
                found.company = str(row.get("company_token") or found.company)
        return found

    def candidates(self, near_keys: Iterable[str]) -> set[str]:
        """crm_ids listed under any of the blocking keys."""
        found: set[str] = set()
        for key in near_keys:
            item = self.get(key)
            if item:
                found.update(str(c) for c in item.get("crm_ids", set()))
        return found

    # Writes (ler-push) --------------------------------------------------------------------

    def link_key(
        self,
        id_key: str,
        crm_id: str,
        *,
        person_name: str,
        company: str,
        company_token: str,
        source: str,
        now: dt.datetime,
        repoint: bool = False,
    ) -> bool:
        """Point ``id_key`` at ``crm_id``; False when it names another contact (kept as is)."""
        kwargs: dict[str, Any] = {
            "Key": {"id_key": id_key},
            "UpdateExpression": (
                "SET crm_id = :c, person_name = :n, company = :co, company_token = :ct, "
                "#src = :s, updated_at = :u, #ttl = :ttl"
            ),
            "ExpressionAttributeNames": {"#src": "source", "#ttl": IDENTITY_TTL},
            "ExpressionAttributeValues": {
                ":ttl": self.expires_at(now),
                ":c": crm_id,
                ":n": person_name,
                ":co": company,
                ":ct": company_token,
                ":s": source,
                ":u": now.isoformat(),
            },
        }
        if not repoint:
            kwargs["ConditionExpression"] = "attribute_not_exists(crm_id) OR crm_id = :c"
        try:
            self.table.update_item(**kwargs)
        except ClientError as err:
            if not condition_failed(err):
                raise
            return False
        return True

    def add_candidate(self, near_key: str, crm_id: str, now: dt.datetime) -> None:
        """List ``crm_id`` under a blocking key (a set: adding twice changes nothing)."""
        self.table.update_item(
            Key={"id_key": near_key},
            UpdateExpression="ADD crm_ids :c SET updated_at = :u, #ttl = :ttl",
            ExpressionAttributeNames={"#ttl": IDENTITY_TTL},
            ExpressionAttributeValues={
                ":c": {crm_id},
                ":u": now.isoformat(),
                ":ttl": self.expires_at(now),
            },
        )
