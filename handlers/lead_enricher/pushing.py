"""Pushing a clean lead (ler-push): create or link the CRM contact, ler-records, ler-identity.

The only function that holds the CRM key or writes the identity index. For each clean lead:

1. claim the lead for its pass (``claims``): a redelivered event creates nothing twice;
2. find the contact: dedupe's ``link:<crm_id>`` if the CRM still has it, else one final,
   authoritative search of the live CRM by email, then by phone (the backstop to the index);
3. create the contact, or fill only its empty fields (``crm_fields``): never overwrite;
4. write the clean record to ler-records and point the lead's keys at the contact.

``make verify``'s check lead claims nothing and stops after step 2's read: its arrival is
noted instead (``check_arrivals``).

ler-backfill also invokes it directly, page by page, to re-sync ler-identity from the CRM's
contact export (``resync_page``), so the CRM key and the index writes stay in this one role.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from handlers.common import metrics
from handlers.common.degradations import Ledger
from handlers.common.hubspot import HubSpotError, token_from_secret
from handlers.common.observability import get_logger
from handlers.common.secrets import default_cache
from handlers.lead_enricher import lead_metrics
from handlers.lead_enricher.check_arrivals import CheckArrivals
from handlers.lead_enricher.claims import PushClaims
from handlers.lead_enricher.cleanup import clean_email, phone_e164
from handlers.lead_enricher.contract import PUSH_FUNCTION, RECORDS_PREFIX, PushSettings
from handlers.lead_enricher.crm import Crm, CrmContact, CrmRejected, HubSpotCrm
from handlers.lead_enricher.crm_deletions import hand_over
from handlers.lead_enricher.crm_fields import CREATE_ONLY, crm_properties, fill_empty
from handlers.lead_enricher.enrich_cache import degradation_ledger
from handlers.lead_enricher.forgotten_leads import ForgottenLeads
from handlers.lead_enricher.identity import IdentityIndex
from handlers.lead_enricher.lead import Contact, Lead
from handlers.lead_enricher.matching import company_of, exact_keys, near_keys
from handlers.lead_enricher.storage import ObjectStore


@dataclass(frozen=True)
class PushResult:
    lead_id: str
    crm_id: str | None
    action: str
    filled: tuple[str, ...] = ()


class Pusher:
    def __init__(
        self,
        config: PushSettings,
        crm: Crm,
        clock: Callable[[], dt.datetime],
        index: IdentityIndex | None = None,
        store: ObjectStore | None = None,
        ledger: Ledger | None = None,
        arrivals: CheckArrivals | None = None,
        forget_contact: Callable[[str], Any] | None = None,
        forgotten: ForgottenLeads | None = None,
    ) -> None:
        """``forget_contact``: has what ler holds about a contact HubSpot deleted for good
        erased (``crm_deletions``); by default ler-backfill, invoked asynchronously."""
        self.config = config
        self.crm = crm
        self.index = index or IdentityIndex(
            config.identity_table, config.identity_index, keep_days=config.identity_days
        )
        self.store = store or ObjectStore()
        self.clock = clock
        self.ledger = ledger or degradation_ledger(config.cache_table)
        self.arrivals = arrivals or CheckArrivals(config.cache_table)
        self.forgotten = forgotten or ForgottenLeads.of(config.identity_table, config.forget_salt_secret_id)
        self.forget_contact = forget_contact or (
            lambda crm_id: hand_over(crm_id, config.backfill_function_name)
        )

    # le.clean -----------------------------------------------------------------------------

    def push(self, lead: Lead) -> PushResult:
        if lead.screening is None or lead.screening.decision != "clean" or lead.contact is None:
            raise ValueError(f"lead {lead.lead_id} is not a clean, normalised lead")
        now = self.clock()
        if lead.is_check:
            return self._check(lead, now)
        if self.forgotten.drop(lead, "push"):
            return PushResult(lead.lead_id, None, "forgotten")
        claims = PushClaims(self.index.table, self.index.keep_days)
        claim = claims.claim(lead, now)
        if claim is None:
            get_logger().info(
                "duplicate delivery ignored", lead_id=lead.lead_id, pass_no=lead.pass_no
            )
            return PushResult(lead.lead_id, None, "duplicate")
        try:
            target, action, filled = self._write(lead)
        except CrmRejected as err:
            self._rejected(err, lead, now)
            claims.release(claim)
            raise  # async retries, then ler-dlq: ler-retry re-drives it, parks it, keeps it
        result = PushResult(lead.lead_id, target.crm_id, action, tuple(sorted(filled)))
        record = {
            **lead.to_json(),
            "crm": {"crm_id": target.crm_id, "action": action, "filled": list(result.filled)},
            "pushed_at": now.isoformat(),
        }
        self.store.put_json(
            self.config.records_bucket, f"{RECORDS_PREFIX}{lead.lead_id}.json", record
        )
        self._index(lead.contact, lead, target.crm_id, now)
        claims.complete(claim, crm_id=target.crm_id, action=action, now=now)
        lead_metrics.count(lead, "LeadsKept")
        get_logger().info(
            "lead pushed",
            lead_id=lead.lead_id,
            crm_id=target.crm_id,
            action=action,
            filled=list(result.filled),
        )
        return result

    def _check(self, lead: Lead, now: dt.datetime) -> PushResult:
        """``make verify``'s lead: the CRM read every push makes (token and scope proved), no
        write to the CRM, ler-records or ler-identity; its arrival noted for verify to see."""
        try:
            found = self._existing(lead)
        except HubSpotError as err:
            if err.retryable:
                raise  # a throttle or an outage: the event is retried like any lead's
            # A wrong key or a missing scope: verify reports it, no retry would mend it.
            self.arrivals.record(lead, now, crm=f"CRM search refused (HTTP {err.status})", crm_ok=False)
            get_logger().warning("check lead: CRM search refused", lead_id=lead.lead_id, status=err.status)
            return PushResult(lead.lead_id, None, "check")
        crm = "CRM searched, contact found" if found else "CRM searched, no contact"
        self.arrivals.record(lead, now, crm=crm, crm_ok=True)
        get_logger().info("check lead arrived", lead_id=lead.lead_id)
        return PushResult(lead.lead_id, None, "check")

    def _write(self, lead: Lead) -> tuple[CrmContact, str, dict[str, str]]:
        """Create the contact, or link to the one the CRM has and fill its empty fields."""
        target = self._existing(lead)
        wanted = crm_properties(lead)
        filled: dict[str, str] = {}
        if target is None:
            target, created = self.crm.create({**wanted, **CREATE_ONLY})
            action = "created" if created else "linked"
            if not created:
                filled = fill_empty(target.properties, wanted)
        else:
            action = "linked"
            filled = fill_empty(target.properties, wanted)
        if filled:
            self.crm.update(target.crm_id, filled)
        return target, action, filled

    def _rejected(self, err: CrmRejected, lead: Lead, now: dt.datetime) -> None:
        """A portal rule refused the lead: counted (alarmed), noted for the next junk digest
        with the property names, and logged with the lead (never its values)."""
        metrics.degraded(metrics.CRM_REJECTED)
        named = ", ".join(err.properties)
        self.ledger.note(metrics.CRM_REJECTED, PUSH_FUNCTION, now.timestamp(), named)
        get_logger().warning(
            "HubSpot refused the lead for a required property; kept for replay",
            lead_id=lead.lead_id,
            properties=list(err.properties),
        )

    def _existing(self, lead: Lead) -> CrmContact | None:
        """The contact this lead belongs to, if the CRM has one (the authoritative check)."""
        assert lead.contact is not None
        linked = lead.dedupe.crm_id if lead.dedupe else None
        if linked:
            found = self.crm.get(linked)
            if found is not None:
                return found
            if self.crm.archived(linked):
                get_logger().warning("linked contact is archived in the CRM", crm_id=linked)
            else:  # deleted for good: what ler holds about it goes, the lead is a new one
                self.index.drop_contact(linked)  # now: this lead's keys must not meet it
                self.forget_contact(linked)  # the rest, by ler-backfill
        if lead.contact.email:
            found = self.crm.find_by_email(lead.contact.email)
            if found is not None:
                return found
        if lead.contact.phone:
            return self.crm.find_by_phone(lead.contact.phone)
        return None

    def _index(
        self,
        contact: Contact,
        lead: Lead | None,
        crm_id: str,
        now: dt.datetime,
        *,
        source: str | None = None,
        repoint: bool = False,
    ) -> int:
        """Point the contact's exact keys at ``crm_id`` and list it under its blocking keys."""
        enrichment = lead.enrichment if lead else None
        token = company_of(contact, enrichment)
        written = 0
        for key in exact_keys(contact, enrichment):
            written += self.index.link_key(
                key,
                crm_id,
                person_name=contact.full_name,
                company=contact.company or "",
                company_token=token,
                source=source or (lead.lane if lead else "crm"),
                now=now,
                repoint=repoint,
            )
        for key in near_keys(contact, enrichment):
            self.index.add_candidate(key, crm_id, now)
        return written

    # Re-sync from the CRM export (invoked by ler-backfill) ----------------------------------

    def resync_page(self, after: str | None, limit: int = 100) -> dict[str, Any]:
        """Rewrite the index from one page of the CRM's contacts; the next cursor or None.

        The CRM is the source of truth here, so keys are repointed to the contact that holds
        them now, and every key of a contact merged away in the CRM (found through the crm_id
        index) moves to the surviving contact.
        """
        now = self.clock()
        contacts, next_after = self.crm.page(after, limit)
        keys = repointed = 0
        for crm_contact in contacts:
            contact = self._as_contact(crm_contact)
            keys += self._index(
                contact, None, crm_contact.crm_id, now, source="crm-export", repoint=True
            )
            for merged in crm_contact.merged_ids:
                for row in self.index.rows_of(merged):
                    repointed += self.index.link_key(
                        str(row["id_key"]),
                        crm_contact.crm_id,
                        person_name=contact.full_name,
                        company=contact.company or "",
                        company_token=company_of(contact),
                        source="crm-merge",
                        now=now,
                        repoint=True,
                    )
        return {"contacts": len(contacts), "keys": keys, "repointed": repointed, "next": next_after}

    def _as_contact(self, crm_contact: CrmContact) -> Contact:
        props = crm_contact.properties
        phone = props.get("phone") or props.get("mobilephone") or ""
        return Contact(
            email=clean_email(props.get("email") or ""),
            phone=phone_e164(phone, self.config.default_phone_region) if phone else None,
            first_name=(props.get("firstname") or "").strip() or None,
            last_name=(props.get("lastname") or "").strip() or None,
            company=(props.get("company") or "").strip() or None,
        )


def make_crm(config: PushSettings, clock: Callable[[], dt.datetime]) -> Crm:
    """HubSpot, with the Service Key read from Secrets Manager at call time."""


    def token() -> str:
        return token_from_secret(default_cache.get_string(config.crm_secret_id))

    return HubSpotCrm(
        config.crm_base_url,
        token,
        version=config.hubspot_api_version,
        on_unauthorized=lambda: default_cache.invalidate(config.crm_secret_id),
        wall=lambda: clock().timestamp(),
    )
