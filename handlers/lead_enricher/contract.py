"""Names the infrastructure and the handlers must agree on: prefixes, event types, index.

``components/systems/lead_enricher.py`` imports this module, so a renamed prefix or event type
changes the S3 triggers, IAM scopes and EventBridge rules together with the code that writes
and reads them.
"""

from __future__ import annotations

from typing import Final

MAIL_PREFIX: Final = "inbound/"
"""ler-raw: SES stores inbound mail here; triggers ler-intake."""
UPLOAD_PREFIX: Final = "upload/"
"""ler-raw: manual CSV uploads; triggers ler-intake."""
FORM_PREFIX: Final = "form/"
"""ler-raw: ler-intake keeps the raw form/webhook payloads here; triggers nothing."""
TRIGGER_PREFIXES: Final = (MAIL_PREFIX, UPLOAD_PREFIX)
REPORT_PREFIX: Final = "reports/"
"""ler-raw: one report per CSV upload (``reports/<upload key>.json``): progress while intake
reads it across invocations, then every row's fate; triggers nothing."""
UPLOAD_CONTINUE: Final = "ler_upload_continue"
"""ler-intake's event to itself: go on reading an upload from its report's cursor."""

NORMALIZED_PREFIX: Final = "normalized/"
"""ler-records: the normalised record ler-normalize writes."""
RECORDS_PREFIX: Final = "records/"
"""ler-records: the clean, enriched, deduped record of each lead that reached the CRM."""
JUNK_PREFIX: Final = "junk/"
"""ler-junk: one object per dropped lead, under ``junk/<UTC date>/``."""

NORMALIZED: Final = "le.normalized"
ENRICHED: Final = "le.enriched"
DEDUPED: Final = "le.deduped"
CLEAN: Final = "le.clean"
JUNK: Final = "le.junk"
PIPELINE_EVENTS: Final = (NORMALIZED, ENRICHED, DEDUPED, CLEAN, JUNK)

RESYNC_ACTION: Final = "resync_page"
"""ler-backfill's direct invoke of ler-push: re-sync one page of the CRM export."""

IDENTITY_BY_CRM_ID: Final = "by-crm-id"
"""ler-identity's global secondary index on ``crm_id``."""


def event_source(prefix: str) -> str:
    """The EventBridge ``source`` of one stack's events.

    dev and prod share the account and its default bus, so the stack prefix is part of the
    source and each stack's rules match only its own events.
    """
    return f"crm.{prefix}.ler"
