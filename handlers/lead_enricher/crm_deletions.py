"""A contact ler cached that HubSpot deleted for good: erased here, and the lead goes on as new.

ler-push asks HubSpot for the contact a lead was linked to (ler-identity's ``crm_id``). A 404
there, and a 404 again with ``archived=true`` (``crm.HubSpotCrm.archived``), means the contact
was deleted for good (a GDPR delete, or an archive HubSpot purged after 90 days). ler-push hands
the contact id to ler-backfill in an asynchronous invocation and pushes the lead as a new one;
ler-backfill (900 s, where ler-push has 30) erases what ler holds about the contact with the
engine ``make forget`` uses (handlers/common/privacy.py: its identity rows, and the records,
raw originals and dropped leads they lead to), counts it and logs only counts. An archived
contact can still be restored, so nothing is erased for it.

HubSpot's ``contact.privacyDeletion`` webhook would tell sooner, but ler calls HubSpot with a
Service Key, and "Service Keys do not support webhooks"
(https://developers.hubspot.com/changelog/service-keys): the next lead that meets the contact
is what notices.
"""

from __future__ import annotations

import json

from handlers.common import aws_clients, metrics
from handlers.common.observability import get_logger
from handlers.common.privacy import Person, Where, erase, find
from handlers.lead_enricher import contract
from handlers.lead_enricher.privacy import STORES


def hand_over(crm_id: str, backfill_function: str) -> None:
    """ler-push's part: ler-backfill erases the contact, asynchronously."""
    aws_clients.client("lambda").invoke(
        FunctionName=backfill_function,
        InvocationType="Event",
        Payload=json.dumps({"action": contract.ERASE_DELETED_CONTACT_ACTION, "crm_id": crm_id}),
    )


def where(config: contract.BackfillSettings) -> Where:
    """ler's stores as ler-backfill reaches them."""
    names = {
        contract.IDENTITY.name: config.identity_table,
        contract.RAW_BUCKET: config.raw_bucket,
        contract.RECORDS_BUCKET: config.records_bucket,
        contract.JUNK_BUCKET: config.junk_bucket,
    }
    return Where(names, aws_clients.client("dynamodb"), aws_clients.client("s3"))


def erase_deleted_contact(crm_id: str, where: Where) -> dict[str, int]:
    """Per store, how many records about ``crm_id`` were erased (a repeat erases nothing)."""
    person = Person(ids=frozenset({crm_id}))
    counts = erase(STORES, where, person, find(STORES, where, person), None)
    metrics.count("CrmDeletionsFollowed")
    get_logger().info("contact deleted in the CRM erased here", erased=counts)
    return counts
