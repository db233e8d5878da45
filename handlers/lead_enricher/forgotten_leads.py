"""ler's "do not re-import": a lead of a person ``make forget`` erased, received before the
erasure, is dropped.

The erasure leaves on ler-identity, per email and phone of the person, ``forgotten#`` and its
salted hash (handlers/common/forgotten.py, salt ``ler-forget-salt``) with ``forgotten_at``
(handlers/lead_enricher/privacy.py). A lead still in flight then (on ler-intake-queue, in a
dead-letter queue being re-driven, on ler-retry's path, replayed from ler-raw) would create the
person again: ler-normalize, the first step of every lead, and ler-push, the last before the
CRM, drop it, counted (``ForgottenLeadsDropped``) and logged by lead id only. A lead received
after the erasure is a new contact from a stranger: the person came back of their own accord.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from handlers.common import emails, metrics
from handlers.common.aws_clients import table
from handlers.common.forgotten import salted, stack_salt
from handlers.common.observability import get_logger
from handlers.lead_enricher.lead import Lead


class ForgottenLeads:
    """Whether a lead belongs to a person erased after it was received."""

    def __init__(self, identity_table: str, salt: Callable[[], str | None]) -> None:
        self.identity_table = identity_table
        self.salt = salt

    @classmethod
    def of(cls, identity_table: str, salt_secret_id: str) -> ForgottenLeads:
        return cls(identity_table, lambda: stack_salt(salt_secret_id))

    def _forms(self, lead: Lead) -> list[str]:
        contact = lead.contact
        if contact is None:
            return []
        found = [e for e in (emails.normalise_email(contact.email or ""),) if e]
        if contact.phone:
            found.append(contact.phone)
        return found

    def erased_after(self, lead: Lead) -> bool:
        """True when an erasure of one of the lead's email or phone came after the lead was
        received. No salt yet: nobody was erased with it, so nothing to drop."""
        forms = self._forms(lead)
        salt = self.salt() if forms else None
        if not salt:
            return False
        received = dt.datetime.fromisoformat(lead.received_at).timestamp()
        rows = table(self.identity_table)
        for form in forms:
            item = rows.get_item(
                Key={"id_key": salted(form, salt)}, ConsistentRead=True, ProjectionExpression="forgotten_at"
            ).get("Item")
            if item is not None and received < float(str(item["forgotten_at"])):
                return True
        return False

    def drop(self, lead: Lead, stage: str) -> bool:
        """Whether ``stage`` must drop the lead (counted and logged, by lead id only)."""
        if not self.erased_after(lead):
            return False
        metrics.count("ForgottenLeadsDropped")
        get_logger().info("lead of an erased person, received before the erasure, dropped", lead_id=lead.lead_id, stage=stage)
        return True
