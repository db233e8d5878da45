"""What the five documents declare public and who they let call a model.

Each entry names the function by its seed name (the design's name, without the stack
prefix) and the system it belongs to, so a reviewer can check the list against the per-system
tables in docs/systems/. The pack config may replace or extend every list (see
:mod:`policies.common.config`); these are the defaults.
"""

from __future__ import annotations

from typing import Final

PUBLIC_FUNCTIONS: Final[dict[str, str]] = {
    "dm-merge": "000 duplicate contact merger: Function URL serving the signed confirm links",
    "ls-capture": "002 lead source attributor: the beacon Function URL",
    "ls-report-page": (
        "002 lead source attributor: the weekly report mail's signed read-only page link "
        "(issue 26: ls-report's own URL stays AWS_IAM, for programs)"
    ),
    "ler-intake": (
        "001 lead enricher: form / webhook Function URL in shared-secret mode "
        "(with intakeAuth=iam the URL is AWS_IAM and this entry can be removed by config)"
    ),
    "ler-rescue": (
        "001 lead enricher: the junk digest's rescue links (ler-junk is the replay source); "
        "signed single-use token checked before any read"
    ),
    "upsr-order": "003 upsell recommender: order webhook Function URL, AuthType NONE",
    "upsr-addlink": "003 upsell recommender: one-tap add-link Function URL, AuthType NONE",
    "upsr-compliance": (
        "003 upsell recommender: Shopify's compliance webhooks (customers/redact, "
        "customers/data_request, shop/redact), HMAC checked first, AuthType NONE"
    ),
    "rrs-webhook": "004 review request sender: the only public surface, AuthType NONE",
}
"""Functions whose Function URL may use auth ``NONE`` (authenticity checked in-function)."""

MODEL_CALLERS: Final[dict[str, str]] = {
    "ler-normalize": "001 lead enricher: Bedrock Haiku for fuzzy field resolution",
    "ler-dedupe": "001 lead enricher: Bedrock Haiku for the ambiguous same-person band",
    "ler-filter": "001 lead enricher: Bedrock Haiku for borderline keep-or-drop",
    "upsr-picker": "003 upsell recommender: the only role with bedrock:InvokeModel",
    "rrs-sender": "004 review request sender: grade and compose, the only model caller",
}
"""Functions whose role may hold ``bedrock:InvokeModel*`` (dm and ls have no model at all)."""

ALLOWED_MODEL_IDS: Final[dict[str, str]] = {
    "global.anthropic.claude-haiku-4-5-20251001-v1:0": (
        "001, 003, 004: Haiku 4.5 via the Global cross-Region inference profile (default)"
    ),
    "global.anthropic.claude-sonnet-4-6": (
        "001: the heavier model behind a per-callsite flag, off by default"
    ),
}
"""Model or inference-profile ids a model grant may name."""
