"""The model's part in normalisation: only the ambiguous fields, only within the rules.

The model sees the ambiguous texts and proposes a split name, a country code or the region a
phone number was written in. Each proposal is then judged by the deterministic rules:

* a name may only reorder the words it was given (no invented or corrected names);
* a country must be an ISO alpha-2 code, consistent with a valid phone's country;
* a phone region must make the original digits a valid number there (phonenumbers rebuilds
  the E.164 from the digits; the model never writes digits).

An answer that fails its rule is discarded and the field keeps its deterministic value.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from handlers.common.model_call import ModelAnswer, call_structured
from handlers.lead_enricher.cleanup import Cleanup, case_name, name_tokens, phone_e164, phone_region
from handlers.lead_enricher.countries import is_iso_code

MAX_TOKENS = 300
"""The answer's token cap (Converse ``maxTokens``); ``make cost`` prices its worst case at it."""

TOOL_NAME = "resolve_lead_fields"
SYSTEM = (
    "You tidy contact fields of sales leads. Answer only for the fields you are asked about; "
    "leave a field null when unsure. Never invent, correct or translate names: only decide "
    "which of the given words are the first name, the last name and, if any, a company name."
)


class FieldResolution(BaseModel):
    """The model's proposal for the ambiguous fields (null where it has none)."""

    model_config = ConfigDict(defer_build=True)

    first_name: str | None = Field(default=None, description="Given name, words from the input")
    last_name: str | None = Field(default=None, description="Family name, words from the input")
    company: str | None = Field(
        default=None, description="Company words found inside the name text, if any"
    )
    country_code: str | None = Field(default=None, description="ISO 3166-1 alpha-2 code")
    phone_region: str | None = Field(
        default=None, description="ISO alpha-2 code of the country the phone number belongs to"
    )


@dataclass
class Resolution:
    """What the bounded answer changed and what it had to throw away."""

    accepted: list[str] = field(default_factory=list)
    discarded: dict[str, str] = field(default_factory=dict)


def prompt(cleanup: Cleanup) -> str:
    """The user message: the ambiguous texts and the facts that help, nothing else."""
    contact = cleanup.contact
    lines = ["Resolve these lead fields."]
    for name, text in sorted(cleanup.ambiguous.items()):
        lines.append(f"- {name}: {text!r}")
    if contact.email:
        lines.append(f"Context: email domain {contact.email_domain}")
    if contact.country:
        lines.append(f"Context: country {contact.country}")
    if contact.company:
        lines.append(f"Context: company {contact.company!r}")
    return "\n".join(lines)


def _words(text: str) -> list[str]:
    return [w.lower().rstrip(".") for w in name_tokens(text)]


def _uses_only(given: Counter[str], proposed: list[str]) -> bool:
    return not (Counter(proposed) - given)


def apply(cleanup: Cleanup, answer: FieldResolution) -> Resolution:
    """Keep each proposed value that passes its rule; discard the rest, saying why."""
    contact = cleanup.contact
    result = Resolution()

    original = cleanup.ambiguous.get("name")
    if original is not None and (answer.first_name or answer.last_name):
        given = Counter(_words(original))
        first = name_tokens(answer.first_name or "")
        last = name_tokens(answer.last_name or "")
        company = name_tokens(answer.company or "") if not contact.company else []
        proposed = [w.lower().rstrip(".") for w in first + last + company]
        if not first:
            result.discarded["name"] = "no first name"
        elif not _uses_only(given, proposed):
            result.discarded["name"] = "uses words that are not in the input"
        else:
            contact.first_name = case_name(first)
            contact.last_name = case_name(last, surname=True) or None
            if company:
                contact.company = " ".join(company)
            result.accepted.append("name")

    original = cleanup.ambiguous.get("phone")
    if original is not None and answer.phone_region:
        region = answer.phone_region.strip().upper()
        e164 = phone_e164(original, region) if is_iso_code(region) else None
        if e164 is None:
            result.discarded["phone"] = f"{region!r} does not make the digits a valid number"
        elif contact.country and phone_region(e164) != contact.country:
            result.discarded["phone"] = f"number in {region} disagrees with {contact.country}"
        else:
            contact.phone = e164
            result.accepted.append("phone")

    if "country" in cleanup.ambiguous and answer.country_code:
        code = answer.country_code.strip().upper()
        if not is_iso_code(code):
            result.discarded["country"] = f"{code!r} is not an ISO alpha-2 code"
        elif contact.phone and phone_region(contact.phone) not in (None, code):
            result.discarded["country"] = f"{code} disagrees with the phone's country"
        else:
            contact.country = code
            result.accepted.append("country")

    if contact.country is None and contact.phone:
        contact.country = phone_region(contact.phone)
    return result


def resolve(cleanup: Cleanup, *, model_id: str, client: Any = None) -> tuple[Resolution, str]:
    """Ask the model about the ambiguous fields; (resolution, outcome for the record)."""
    answer = call_structured(
        model_id=model_id,
        prompt=prompt(cleanup),
        output_model=FieldResolution,
        tool_name=TOOL_NAME,
        tool_description="Record the resolved lead fields.",
        system=SYSTEM,
        client=client,
        max_tokens=MAX_TOKENS,
    )
    if not isinstance(answer, ModelAnswer):
        resolution = Resolution(discarded={f: answer.reason.value for f in cleanup.ambiguous})
        return resolution, f"no_answer:{answer.reason.value}"
    resolution = apply(cleanup, answer.value)
    return resolution, "discarded" if resolution.discarded and not resolution.accepted else "used"
