"""The model's part in dedupe: only the ambiguous band, and only a choice among candidates.

The model sees the lead and the candidates whose fuzzy score fell in the ambiguous band, and
answers which candidate (if any) is the same person. The answer is bounded: a crm_id that is
not one of the candidates shown is discarded, and so is a "same person" without high
confidence; a discarded or missing answer means "new" (a duplicate is recoverable, a wrong
link would attach one person's lead to another's record).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from handlers.common.model_call import ModelAnswer, call_structured
from handlers.lead_enricher.matching import Profile

MAX_TOKENS = 200
"""The answer's token cap (Converse ``maxTokens``); ``make cost`` prices its worst case at it."""

TOOL_NAME = "judge_same_person"
SYSTEM = (
    "You decide whether a new sales lead is the same person as an existing CRM contact. "
    "Answer with the contact id only when the evidence says the same human being; different "
    "people at one company (colleagues, relatives) are not the same person."
)


class SamePersonAnswer(BaseModel):
    """The model's judgement."""

    model_config = ConfigDict(defer_build=True)

    same_person_crm_id: str | None = Field(
        default=None, description="The id of the contact who is the same person, or null"
    )
    confidence: Literal["high", "low"] = Field(description="How sure the judgement is")


def prompt(lead: Profile, candidates: list[tuple[Profile, float]]) -> str:
    lines = [
        "New lead:",
        f"  name: {lead.name!r}; company: {lead.company!r}; "
        f"emails: {sorted(lead.emails)}; phones: {sorted(lead.phones)}",
        "Existing contacts:",
    ]
    for candidate, similarity in candidates:
        lines.append(
            f"  id {candidate.crm_id}: name {candidate.name!r}; company {candidate.company!r}; "
            f"emails {sorted(candidate.emails)}; phones {sorted(candidate.phones)}; "
            f"similarity {similarity:.2f}"
        )
    return "\n".join(lines)


def judge(
    lead: Profile, candidates: list[tuple[Profile, float]], *, model_id: str, client: Any = None
) -> tuple[str | None, str]:
    """(crm_id or None, outcome for the record: used / discarded / no_answer:<why>)."""
    answer = call_structured(
        model_id=model_id,
        prompt=prompt(lead, candidates),
        output_model=SamePersonAnswer,
        tool_name=TOOL_NAME,
        tool_description="Record whether the lead is one of the existing contacts.",
        system=SYSTEM,
        client=client,
        max_tokens=MAX_TOKENS,
    )
    if not isinstance(answer, ModelAnswer):
        return None, f"no_answer:{answer.reason.value}"
    chosen = answer.value.same_person_crm_id
    if chosen is None:
        return None, "used"
    if chosen not in {c.crm_id for c, _ in candidates}:
        return None, "discarded:unknown_candidate"
    if answer.value.confidence != "high":
        return None, "discarded:low_confidence"
    return chosen, "used"
