"""Push's exactly-once guard: one claim row per lead in ler-identity (``LEAD#<lead_id>``).

EventBridge and the re-drive jobs deliver at least once, so push first claims the lead for
its pass with a conditional PutItem. The claim holds a lease: a second delivery while the
first is still working is told to come back later (its invocation fails and is retried),
one arriving after a crash takes the stale lease over, and one arriving after the pass is
done is recognised as a duplicate and does nothing. A later enrichment pass of the same lead
may claim it again, which is how a lead enriched late fills the contact's empty fields.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from handlers.common.transitions import condition_failed, old_item
from handlers.lead_enricher.contract import IDENTITY_TTL
from handlers.lead_enricher.lead import Lead

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

LEASE_SECONDS = 120
"""Longer than push's 30 s timeout and its retries: a live push is never taken over."""


class ClaimBusy(RuntimeError):
    """Another delivery of this lead is being pushed right now; retry later."""


@dataclass(frozen=True)
class Claim:
    lead_id: str
    pass_no: int
    token: str

    @property
    def key(self) -> dict[str, str]:
        return {"id_key": f"LEAD#{self.lead_id}"}


class PushClaims:
    """Conditional PutItem / UpdateItem on the claim rows (push's own grants)."""

    def __init__(self, table: Table, keep_days: int) -> None:
        self.table = table
        self.keep_days = keep_days

    def claim(self, lead: Lead, now: dt.datetime) -> Claim | None:
        """The claim for this pass, or None when the pass (or a later one) is already done."""
        claim = Claim(lead.lead_id, lead.pass_no, secrets.token_hex(8))
        epoch = int(now.timestamp())
        try:
            self.table.put_item(
                Item={
                    **claim.key,
                    "status": "pushing",
                    "pass_no": claim.pass_no,
                    "claim": claim.token,
                    "claimed_at": epoch,
                    IDENTITY_TTL: epoch + self.keep_days * 86400,  # ler-identity's TTL
                },
                ConditionExpression=(
                    "attribute_not_exists(id_key)"
                    " OR (#s = :done AND pass_no < :p)"
                    " OR (#s = :pushing AND claimed_at < :stale AND pass_no <= :p)"
                ),
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={
                    ":done": "done",
                    ":pushing": "pushing",
                    ":p": claim.pass_no,
                    ":stale": epoch - LEASE_SECONDS,
                },
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as err:
            if not condition_failed(err):
                raise
            held: dict[str, Any] = old_item(err) or {}
            if held.get("status") == "pushing" and int(held.get("pass_no", 0)) <= claim.pass_no:
                raise ClaimBusy(f"lead {lead.lead_id} is being pushed by another delivery") from err
            return None
        return claim

    def complete(self, claim: Claim, *, crm_id: str, action: str, now: dt.datetime) -> None:
        """Mark the pass done (only by the holder of the claim)."""
        self.table.update_item(
            Key=claim.key,
            UpdateExpression="SET #s = :done, crm_id_pushed = :c, #a = :a, done_at = :t",
            ConditionExpression="claim = :token",
            ExpressionAttributeNames={"#s": "status", "#a": "action"},
            ExpressionAttributeValues={
                ":done": "done",
                ":c": crm_id,
                ":a": action,
                ":t": now.isoformat(),
                ":token": claim.token,
            },
        )

    def release(self, claim: Claim) -> None:
        """Give the claim up (only its holder): the lease is made stale at once, so the retry
        of a push the CRM refused takes it over instead of waiting out the lease."""
        try:
            self.table.update_item(
                Key=claim.key,
                UpdateExpression="SET claimed_at = :zero",
                ConditionExpression="claim = :token AND #s = :pushing",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={":zero": 0, ":token": claim.token, ":pushing": "pushing"},
            )
        except ClientError as err:
            if not condition_failed(err):
                raise
