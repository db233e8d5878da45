"""Identity keys and deterministic fuzzy scoring: how dedupe decides "same person".

Exact keys (the document's typed, normalised ``id_key`` values) link outright:
``EMAIL#jane.doe@acme-widgets.co.uk``, ``PHONE#+447911123456``, ``FP#janedoe|acmewidgets``.

Near-match *blocking* keys find candidates for fuzzy scoring without scanning the index:
``NEAR#SC#doe|acmewidgets`` (surname at company) and ``NEAR#EC#janedoe@acme-widgets.co.uk``
(the mailbox without dots and ``+tags``). Several people can share a blocking key, so those
rows hold a set of ``crm_ids`` instead of one ``crm_id`` (and stay out of the crm_id index).

The score is a weighted similarity of name, company and mailbox in [0, 1]; the thresholds
that turn it into link / ask the model / new come from configuration. No AWS, no model here.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from handlers.common.strings import jaro_winkler
from handlers.lead_enricher.domains import is_free_mail
from handlers.lead_enricher.lead import Contact, Enrichment

LEGAL_SUFFIXES = frozenset(
    {
        "ltd",
        "limited",
        "inc",
        "incorporated",
        "llc",
        "llp",
        "plc",
        "gmbh",
        "corp",
        "corporation",
        "co",
        "company",
        "bv",
        "sa",
        "sarl",
        "ag",
        "the",
    }
)
NAME_WEIGHT = 0.45
COMPANY_WEIGHT = 0.25
MAILBOX_WEIGHT = 0.30


def fold(text: str) -> str:
    """Lower case, accents removed, letters and digits only: ``José O'Neil`` -> ``joseoneil``."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if ch.isalnum() and not unicodedata.combining(ch))


def company_token(company: str | None) -> str:
    """A company's comparable form: folded, legal suffixes dropped (``Acme Widgets Ltd``)."""
    if not company:
        return ""
    words = [fold(w) for w in re.split(r"[\s,.&/-]+", company)]
    return "".join(w for w in words if w and w not in LEGAL_SUFFIXES)


def company_of(contact: Contact, enrichment: Enrichment | None = None) -> str:
    """The company a lead works for: as given, else as enriched, else its business domain."""
    token = company_token(contact.company)
    if token:
        return token
    if enrichment and "company_name" in enrichment.fields:
        token = company_token(str(enrichment.fields["company_name"].get("value", "")))
        if token:
            return token
    domain = contact.email_domain
    if domain and not is_free_mail(domain):
        return fold(domain.split(".")[0])
    return ""


def canonical_mailbox(email: str) -> str:
    """``Jane.Doe+leads@acme.co.uk`` -> ``janedoe@acme.co.uk`` (dots and +tags ignored)."""
    local, _, domain = email.lower().partition("@")
    return f"{local.split('+')[0].replace('.', '')}@{domain}"


def exact_keys(contact: Contact, enrichment: Enrichment | None = None) -> list[str]:
    """The lead's exact identity keys, strongest first (email, phone, fingerprint)."""
    keys = []
    if contact.email:
        keys.append(f"EMAIL#{contact.email}")
    if contact.phone:
        keys.append(f"PHONE#{contact.phone}")
    person = fold(contact.full_name)
    company = company_of(contact, enrichment)
    if contact.first_name and contact.last_name and person and company:
        keys.append(f"FP#{person}|{company}")
    return keys


def near_keys(contact: Contact, enrichment: Enrichment | None = None) -> list[str]:
    """Blocking keys whose rows list candidate crm_ids for fuzzy scoring."""
    keys = []
    surname = fold(contact.last_name or "")
    company = company_of(contact, enrichment)
    if surname and company:
        keys.append(f"NEAR#SC#{surname}|{company}")
    if contact.email:
        keys.append(f"NEAR#EC#{canonical_mailbox(contact.email)}")
    return keys


@dataclass
class Profile:
    """A person as the identity index knows them (or as the lead describes them)."""

    crm_id: str = ""
    name: str = ""
    company: str = ""
    emails: set[str] = field(default_factory=set)
    phones: set[str] = field(default_factory=set)


def lead_profile(contact: Contact, enrichment: Enrichment | None = None) -> Profile:
    return Profile(
        name=contact.full_name,
        company=company_of(contact, enrichment),
        emails={contact.email} if contact.email else set(),
        phones={contact.phone} if contact.phone else set(),
    )


def _mailbox_similarity(lead: set[str], known: set[str]) -> float:
    """1 for the same mailbox; 0.5 for another mailbox at the same business domain.

    Two different mailboxes at one company are evidence of the company, not of the person
    (each person has one work mailbox), so a near-identical local part earns nothing more.
    """
    best = 0.0
    for a in lead:
        for b in known:
            if canonical_mailbox(a) == canonical_mailbox(b):
                return 1.0
            domain_a, domain_b = a.rpartition("@")[2], b.rpartition("@")[2]
            if domain_a == domain_b and not is_free_mail(domain_a):
                best = 0.5
    return best


def score(lead: Profile, candidate: Profile) -> float:
    """Weighted similarity in [0, 1] of name, company and mailbox; a shared phone is 1."""
    if lead.phones & candidate.phones:
        return 1.0
    name = jaro_winkler(fold(lead.name), fold(candidate.name))
    company = 0.0
    if lead.company and candidate.company:
        # A typo in a company name still counts; two different companies count nothing.
        similar = jaro_winkler(lead.company, candidate.company)
        company = similar if similar >= 0.9 else 0.0
    mailbox = _mailbox_similarity(lead.emails, candidate.emails)
    return round(NAME_WEIGHT * name + COMPANY_WEIGHT * company + MAILBOX_WEIGHT * mailbox, 4)
