"""What a lead writes into the CRM, and the rule that protects what people typed there.

``crm_properties`` maps the lead (contact + enrichment) to HubSpot contact properties.
``fill_empty`` keeps only those whose CRM value is empty: an existing value, whoever wrote it,
is never overwritten. Enum-valued HubSpot properties (industry...) are not written; the full
enrichment stays in ler-records.
"""

from __future__ import annotations

from collections.abc import Mapping

from handlers.lead_enricher.lead import Lead

CREATE_ONLY = {"lifecyclestage": "lead", "hs_lead_status": "NEW"}
"""Set when the enricher creates a contact; never on a contact that already exists."""


def crm_properties(lead: Lead) -> dict[str, str]:
    """The lead as HubSpot contact properties (empty values left out)."""
    contact = lead.contact
    if contact is None:
        return {}
    enriched = lead.enrichment.fields if lead.enrichment else {}

    def firmographic(name: str) -> str | None:
        value = (enriched.get(name) or {}).get("value")
        return None if value in (None, "") else str(value)

    wanted = {
        "email": contact.email,
        "firstname": contact.first_name,
        "lastname": contact.last_name,
        "phone": contact.phone,
        "company": contact.company or firmographic("company_name"),
        "country": contact.country,
        "jobtitle": contact.job_title,
        "website": contact.website or (lead.enrichment.domain if lead.enrichment else None),
        "city": firmographic("company_city"),
        "numberofemployees": firmographic("employees"),
    }
    return {
        name: value if name in AS_TYPED else spreadsheet_safe(value)
        for name, value in wanted.items()
        if value
    }


FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""A cell starting with one of these is run as a formula by Excel, LibreOffice and Sheets."""
AS_TYPED = frozenset({"phone"})
"""Properties kept exactly: the normaliser made the phone E.164 (``+44...``), digits only."""


def spreadsheet_safe(value: str) -> str:
    """``value`` with a leading ``'`` when a spreadsheet would run it as a formula.

    The CRM's contacts end up in spreadsheets (exports, reports), so free text from a lead
    (``=cmd|' /C calc'!A0`` as a first name) is neutralised before it reaches the CRM, as
    OWASP's CSV Injection guidance says: prefix a cell that begins with ``=``, ``+``, ``-``,
    ``@``, tab or carriage return with a single quote
    (https://owasp.org/www-community/attacks/CSV_Injection).
    """
    return f"'{value}" if value.startswith(FORMULA_TRIGGERS) else value


def is_empty(value: str | None) -> bool:
    return value is None or not str(value).strip()


def fill_empty(existing: Mapping[str, str | None], wanted: Mapping[str, str]) -> dict[str, str]:
    """The wanted properties whose current CRM value is empty: nothing else is written."""
    return {name: value for name, value in wanted.items() if is_empty(existing.get(name))}
