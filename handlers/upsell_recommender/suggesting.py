"""Suggesting (upsr-picker): suggest jobs from upsr-jobs -> one offer (or one no-fit record) per order.

Per job: catalogue candidates (rows passing every filter), one structured model call for a
ranked shortlist, the filters again on the shortlist against freshly read rows, then one
conditional write: the top survivor as ``chosen`` with its ``send_at``, or ``no-fit``. Nothing
else is written and nothing is sent. A bad, empty or unusable model answer ends in no-fit; no
path writes an unfiltered suggestion.

Throttling that outlasts the model call's own retries fails the record, so SQS redelivers it
later; on the last receive before the dead-letter queue the job ends as no-fit
(``model-unavailable``) instead, so every order still gets its record. A malformed job fails
every time and lands in upsr-jobs-dlq for a person to read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from handlers.common import formats, metrics
from handlers.common.aws_clients import table
from handlers.common.degradations import Ledger
from handlers.common.model_call import NoAnswerReason, NoValidAnswer, call_structured
from handlers.common.observability import get_logger
from handlers.upsell_recommender.catalogue import fetch, snapshot
from handlers.upsell_recommender.contract import OFFERS_KEY, OFFERS_TTL
from handlers.upsell_recommender.domain import OfferState, offer_id_for
from handlers.upsell_recommender.jobs import JOB_VERSION, VERSION_KEY, SuggestJob
from handlers.upsell_recommender.offers import put_offer
from handlers.upsell_recommender.picking import (
    SYSTEM_PROMPT,
    TOOL_NAME,
    FilterContext,
    Shortlist,
    build_prompt,
    candidates,
    choose,
    rules_shortlist,
)

MAX_TOKENS = 600
"""The answer's token cap (Converse ``maxTokens``); ``make cost`` prices its worst case at it."""

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

    from handlers.common.model_call import ConverseClient
    from handlers.upsell_recommender.contract import PickerSettings
    from handlers.upsell_recommender.jobs import SuggestJob
    from handlers.upsell_recommender.picking import Decision


class PickOutcome(StrEnum):
    """What one job produced."""

    CHOSEN = "chosen"
    NO_FIT = "no-fit"
    DUPLICATE = "duplicate"


class ModelUnavailable(Exception):
    """Bedrock stayed throttled; the job is retried by SQS."""


@dataclass(frozen=True)
class PickerDeps:
    """What upsr-picker touches.

    Attributes:
        offers: upsr-offers (PutItem, conditional).
        catalogue: upsr-catalogue (Scan, BatchGetItem).
        model_id: The configured model or inference profile.
        model_client: A Converse client; None for the function's bedrock-runtime client.
        delay_s: Time between the order and the nudge.
        window_s: Attribution window after the nudge.
        retention_s: How long after the window the offer item lives (TTL).
        max_price_ratio: Largest add-on price as a share of the subtotal.
        max_age_s: Oldest acceptable catalogue row.
        max_receives: Receives before SQS moves a job to the DLQ.
        ledger: The system's degradation notes (upsr-offers): the composition root wraps
            ``model_client`` to note a refused model there (``degradations.NotingRefusals``).
    """

    offers: Table
    catalogue: Table
    model_id: str
    model_client: ConverseClient | None
    delay_s: int
    window_s: int
    retention_s: int
    max_price_ratio: float
    max_age_s: int
    max_receives: int
    ledger: Ledger

    @classmethod
    def from_settings(cls, config: PickerSettings, *, model_client: ConverseClient | None = None) -> PickerDeps:
        return cls(
            offers=table(config.offers_table),
            catalogue=table(config.catalogue_table),
            model_id=config.picker_model_id,
            model_client=model_client,
            delay_s=config.nudge_delay_minutes * 60,
            window_s=config.attribution_window_hours * 3600,
            retention_s=config.offer_retention_days * 86400,
            max_price_ratio=config.max_price_ratio,
            max_age_s=config.catalogue_max_age_hours * 3600,
            max_receives=config.jobs_max_receives,
            ledger=Ledger(table(config.offers_table), OFFERS_KEY, OFFERS_TTL),
        )


def process_record(record: Mapping[str, Any], deps: PickerDeps, *, now: float) -> PickOutcome:
    """One SQS record (the raw Lambda shape): parse the job and pick for it; a format version
    not read here is refused (``formats.read``), a malformed job fails (retried, then DLQ)."""
    attributes = record.get("attributes") or {}
    receives = int(attributes.get("ApproximateReceiveCount", "1"))
    body = str(record.get("body", ""))
    formats.read(json.loads(body), current=JOB_VERSION, what="suggest job", key=VERSION_KEY)
    job = SuggestJob.model_validate_json(body)
    get_logger().append_keys(order_id=job.order_id)
    return pick(job, deps, now=now, receive_count=receives)


def pick(job: SuggestJob, deps: PickerDeps, *, now: float, receive_count: int = 1) -> PickOutcome:
    """Choose one add-on for ``job`` and write the offer, or write no-fit."""
    log = get_logger()
    rows = snapshot(deps.catalogue, now)
    by_sku = {row.sku: row for row in rows}
    basket_skus = [line.sku for line in job.basket]
    ctx = FilterContext(
        basket=[by_sku[s] for s in basket_skus if s in by_sku],
        owned=job.owned(),
        subtotal=job.subtotal,
        now=now,
        max_price_ratio=deps.max_price_ratio,
        max_age_s=deps.max_age_s,
    )
    offered = candidates(rows, ctx)
    if not offered:
        return _no_fit(job, deps, now, "no-candidates")

    answer = call_structured(
        model_id=deps.model_id,
        prompt=build_prompt(
            [
                {"title": line.title, "sku": line.sku, "quantity": line.quantity}
                for line in job.basket
            ],
            offered,
        ),
        output_model=Shortlist,
        tool_name=TOOL_NAME,
        tool_description="Propose up to three add-ons from the candidate list, best first.",
        system=SYSTEM_PROMPT,
        client=deps.model_client,
        max_tokens=MAX_TOKENS,
    )
    if isinstance(answer, NoValidAnswer) and answer.reason is NoAnswerReason.CAPPED:
        # The day's model calls are spent (counted by handlers/common/spend.py): the rules pick.
        shortlist = rules_shortlist(offered).suggestions
    elif isinstance(answer, NoValidAnswer):
        log.warning("no usable model answer", extra={"reason": answer.reason.value})
        if answer.retryable and receive_count < deps.max_receives:
            raise ModelUnavailable(answer.detail)
        return _no_fit(job, deps, now, f"model-{answer.reason.value}")
    else:
        shortlist = answer.value.suggestions
    if not shortlist:
        return _no_fit(job, deps, now, "model-empty")

    fresh = fetch(deps.catalogue, [s.sku for s in shortlist] + basket_skus)
    decision = choose(
        shortlist, fresh, replace(ctx, basket=[fresh[s] for s in basket_skus if s in fresh])
    )
    if decision.chosen is None:
        return _no_fit(job, deps, now, "filters-rejected", decision)

    item = _chosen_item(job, decision, deps, now)
    if not put_offer(deps.offers, item):
        log.info("order already has an offer")
        return PickOutcome.DUPLICATE
    log.info("offer chosen", extra={"sku": decision.chosen.sku, "rejected": decision.rejected})
    return PickOutcome.CHOSEN


def _base_item(job: SuggestJob, now: float) -> dict[str, Any]:
    return {
        "offer_id": offer_id_for(job.order_id),
        "order_id": job.order_id,
        "customer_id": job.customer_id,
        "created_at": int(now),
    }


def _chosen_item(
    job: SuggestJob, decision: Decision, deps: PickerDeps, now: float
) -> dict[str, Any]:
    row = decision.chosen
    assert row is not None
    send_at = int(now) + deps.delay_s
    item = _base_item(job, now)
    item.update(
        {
            "state": OfferState.CHOSEN.value,
            "send_at": send_at,
            "sku": row.sku,
            "variant_id": row.variant_id,
            "title": row.title,
            "price": row.price,
            "currency": job.currency,
            "line": decision.line,
            "contact": job.contact.contact().to_item(),
            "model_id": deps.model_id,
            "shortlist": list(decision.shortlist),
            "rejected": dict(decision.rejected),
            OFFERS_TTL: send_at + deps.window_s + deps.retention_s,
        }
    )
    return item


def _no_fit(
    job: SuggestJob, deps: PickerDeps, now: float, reason: str, decision: Decision | None = None
) -> PickOutcome:
    """Record that no add-on fits (no contact details kept); stop."""
    item = _base_item(job, now)
    item.update(
        {
            "state": OfferState.NO_FIT.value,
            "send_at": int(now),
            "reason": reason,
            OFFERS_TTL: int(now) + deps.retention_s,
        }
    )
    if decision is not None:
        item["shortlist"] = list(decision.shortlist)
        item["rejected"] = dict(decision.rejected)
    if not put_offer(deps.offers, item):
        return PickOutcome.DUPLICATE
    get_logger().info("no fitting add-on", extra={"reason": reason})
    metrics.count("Offers", 1, OfferState.NO_FIT.value)
    return PickOutcome.NO_FIT
