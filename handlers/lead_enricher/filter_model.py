"""The model's part in filtering: only borderline leads, and only within the rules.

The model sees the lead's fields, message and the signals found, and says keep or drop with
a reason from a fixed list. The answer is bounded afterwards: a known contact (dedupe linked
it) is never dropped, a drop must name a listed reason, and anything invalid means keep (a
kept junk lead costs a human one delete; a dropped real lead may cost a customer).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from handlers.common.model_call import ModelAnswer, call_structured
from handlers.lead_enricher.junk_signals import Weighed
from handlers.lead_enricher.lead import Lead

MAX_TOKENS = 200
"""The answer's token cap (Converse ``maxTokens``); ``make cost`` prices its worst case at it."""

TOOL_NAME = "judge_lead"
SYSTEM = (
    "You screen inbound sales leads for a small business. Drop only clear junk: spam, "
    "vendor pitches, bots, nonsense, tests. Keep anything a person might genuinely be asking."
)
DropReason = Literal[
    "spam", "vendor_pitch", "bot", "nonsense", "test_submission", "abusive", "wrong_recipient"
]
DROP_REASONS: tuple[str, ...] = DropReason.__args__  # type: ignore[attr-defined]


class LeadJudgement(BaseModel):
    """Keep or drop, and why."""

    model_config = ConfigDict(defer_build=True)

    decision: Literal["keep", "drop"] = Field(description="keep the lead or drop it as junk")
    reason: str = Field(description="For drop: one of " + ", ".join(DROP_REASONS))


def prompt(lead: Lead, weighed: Weighed) -> str:
    contact = lead.contact
    lines = [
        f"Lane: {lead.lane}",
        f"Name: {contact.full_name if contact else ''!r}",
        f"Email: {contact.email if contact else None}",
        f"Company: {contact.company if contact else None}",
        f"Signals: {', '.join(weighed.signals) or 'none'} (junk score {weighed.score:.2f})",
        "Message:",
        lead.message[:1500],
    ]
    return "\n".join(lines)


def judge(
    lead: Lead, weighed: Weighed, *, model_id: str, client: Any = None
) -> tuple[str | None, str]:
    """(drop reason or None for keep, outcome for the record)."""
    answer = call_structured(
        model_id=model_id,
        prompt=prompt(lead, weighed),
        output_model=LeadJudgement,
        tool_name=TOOL_NAME,
        tool_description="Record whether the lead is kept or dropped as junk.",
        system=SYSTEM,
        client=client,
        max_tokens=MAX_TOKENS,
    )
    if not isinstance(answer, ModelAnswer):
        return None, f"no_answer:{answer.reason.value}"
    judgement = answer.value
    if judgement.decision == "keep":
        return None, "used"
    if judgement.reason not in DROP_REASONS:
        return None, "discarded:unlisted_reason"
    if lead.dedupe and lead.dedupe.crm_id:
        return None, "discarded:known_contact"
    return f"model:{judgement.reason}", "used"
