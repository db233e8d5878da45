"""Business metrics and cold starts as CloudWatch embedded metric format (EMF) log lines.

Powertools Metrics writes each metric as one JSON line on stdout; CloudWatch Logs extracts the
metric from the log group, so there is no API call and no IAM permission to grant (AWS Lambda
Powertools for Python, "Metrics": https://docs.powertools.aws.dev/lambda/python/latest/core/metrics/;
CloudWatch User Guide, "Embedding metrics within logs":
https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format.html).

CloudWatch bills each metric (name x dimension values) per month, so the catalogue below is
closed: every business metric has at most one dimension with a fixed set of values, and a value
outside the set is counted as ``other``. The namespace is the stack's (``crm/<prefix>``, from
``POWERTOOLS_METRICS_NAMESPACE``); every metric carries ``service`` = the system key.

The handler code calls :func:`count` beside the business outcome. Cold starts are not a
metric: ``@logged`` (handlers/common/observability.py) logs ``cold_start`` on every line, and
Lambda's REPORT line carries the init duration, so no series is billed for them. A stack may
turn the metrics off (``businessMetrics: false``, which sets ``POWERTOOLS_METRICS_DISABLED``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit, single_metric

DEFAULT_NAMESPACE = "crm/local"
OTHER = "other"
PER_FUNCTION_SERIES: tuple[str, ...] = ()
"""Series every function emits on its own, whatever the business (an idle stack bills them):
none. A ``ColdStart`` series per function cost $0.30 a month each for a log field."""


@dataclass(frozen=True)
class BusinessMetric:
    """One counted outcome.

    Attributes:
        name: Metric name, unique across the systems.
        what: What one count means (the dashboard's label).
        dimension: The one dimension, or None.
        values: The dimension's values; anything else is counted as ``other``.
        share_of: Another metric this one is a part of; the dashboard draws the share in %.
    """

    name: str
    what: str
    dimension: str | None = None
    values: tuple[str, ...] = ()
    share_of: str | None = None

    @property
    def series(self) -> tuple[tuple[str, str] | None, ...]:
        """Every (dimension, value) this metric can be emitted with: what CloudWatch bills."""
        if self.dimension is None:
            return (None,)
        return tuple((self.dimension, v) for v in (*self.values, OTHER))


JUNK_REASONS = ("honeypot", "submitted_too_fast", "disposable_domain", "spam_phrases", "model")
"""The junk reasons counted on their own; the rest of the signals are ``other``."""

CATALOGUE: Mapping[str, tuple[BusinessMetric, ...]] = {
    "dm": (
        BusinessMetric(
            "PairsScored", "pairs scored, by band", "band", ("automatic", "propose", "record_only")
        ),
        BusinessMetric("Merges", "merges carried out"),
        BusinessMetric("Undos", "merges undone"),
        BusinessMetric("CappedBlocks", "oversized blocks capped in a blocking run"),
        BusinessMetric(
            "SecondaryEmailsNotAdded",
            "absorbed addresses HubSpot's legacy secondary-email path refused (merge kept)",
        ),
        BusinessMetric(
            "ClaimsResumed",
            "interrupted merges and undos the sweep finished, put back or stopped for a person",
        ),
        BusinessMetric("DeletedContactsErased", "contacts deleted in HubSpot whose data dm erased"),
    ),
    "ler": (
        BusinessMetric("Leads", "leads received, by lane", "lane", ("form", "mail", "upload")),
        BusinessMetric("LeadsKept", "leads kept and pushed to the CRM"),
        BusinessMetric("LeadsJunked", "leads junked, by reason", "reason", JUNK_REASONS),
        BusinessMetric("EnrichmentPending", "enrichments left pending for a retry"),
        BusinessMetric("CrmDeletionsFollowed", "cached contacts HubSpot had deleted, erased here"),
        BusinessMetric("ForgottenLeadsDropped", "leads of an erased person received before the erasure"),
    ),
    "ls": (
        BusinessMetric("Beacons", "page-view beacons captured"),
        BusinessMetric("Enquiries", "enquiries captured"),
        BusinessMetric(
            "EnquiriesUnattributed",
            "enquiries with no source signal: no answer, a device never seen",
            share_of="Enquiries",
        ),
    ),
    "upsr": (
        BusinessMetric("Orders", "orders received"),
        BusinessMetric(
            "Offers",
            "offers closed, by outcome",
            "outcome",
            ("taken", "out-of-window", "ignored", "no-fit", "suppressed"),
        ),
        BusinessMetric("NudgesSent", "nudges sent"),
        BusinessMetric(
            "UnconfirmedNudges", "nudges claimed but never confirmed sent (reported, not re-sent)"
        ),
        BusinessMetric("Taps", "add-link taps, in or out of the window", "window", ("in", "out")),
    ),
    "rrs": (
        BusinessMetric(
            "Requests",
            "requests reaching a terminal state, by state",
            "state",
            ("asked", "diverted", "suppressed"),
        ),
        BusinessMetric("Asks", "review asks sent, by channel", "channel", ("email", "sms")),
        BusinessMetric("Escalations", "escalations handed to the owner"),
        BusinessMetric(
            "UnconfirmedAsks", "asks claimed but never confirmed sent (reported, not re-sent)"
        ),
    ),
}
"""Every business metric of every system: the handlers emit these, the dashboard draws them."""

MODEL_REFUSED = "ModelRefused"
CUSTOMER_REDACTED = "CustomerRedacted"
CRM_REJECTED = "CrmRejected"
DEGRADED = "Degraded"
"""Every degradation is also counted once as ``Degraded`` for its system (``service`` only):
the one series the system's ``degraded`` alarm watches, so a new kind needs no new alarm."""
DEGRADATIONS: Mapping[str, str] = {
    MODEL_REFUSED: "model calls Bedrock refused for access; the rules decided instead",
    CUSTOMER_REDACTED: "orders whose customer Shopify redacted (no protected customer data "
    "access); no nudge",
    CRM_REJECTED: "leads HubSpot refused for a property the portal requires; kept for replay",
}
"""Fallbacks that must not be silent: counted per function by the code that takes them
(handlers/common/model_call.py for a refused model), alarmed per system (``Degraded``), and
named in the owner's next digest (handlers/common/degradations.py)."""

_BY_NAME: dict[str, tuple[str, BusinessMetric]] = {
    m.name: (system, m) for system, metrics in CATALOGUE.items() for m in metrics
}


def system_of(function_name: str | None = None) -> str:
    """The system key of a function: ``dm-block`` -> ``dm``."""
    name = function_name or os.environ.get("POWERTOOLS_SERVICE_NAME") or "crm"
    return name.split("-", 1)[0]


def namespace() -> str:
    return os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or DEFAULT_NAMESPACE


def count(name: str, value: int = 1, dimension_value: str | None = None) -> None:
    """Count ``value`` of business metric ``name`` (with its dimension's value, if it has one).

    One EMF line per call, written at once: nothing is buffered, so nothing is lost when the
    invocation fails after the outcome, and no state outlives the call. Callers count a batch
    once (``count("PairsScored", 12, "propose")``), not item by item.

    Raises KeyError for a name outside :data:`CATALOGUE`: a typo must fail in the tests, not
    create a new billed metric.
    """
    system, metric = _BY_NAME[name]
    if value <= 0 or os.environ.get("POWERTOOLS_METRICS_DISABLED", "").lower() == "true":
        return
    dimensions = {"service": system}
    if metric.dimension is not None:
        label = dimension_value if dimension_value in metric.values else OTHER
        dimensions[metric.dimension] = label
    _single(name, value, dimensions)


def degraded(name: str) -> None:
    """Count one degradation of :data:`DEGRADATIONS` for this function's system."""
    if name not in DEGRADATIONS:
        raise KeyError(name)
    if os.environ.get("POWERTOOLS_METRICS_DISABLED", "").lower() == "true":
        return
    function = os.environ.get("POWERTOOLS_SERVICE_NAME") or "crm"
    system = system_of(function)
    _single(name, 1, {"service": system, "function": function})
    _single(DEGRADED, 1, {"service": system})


SPEND_CAPPED = "SpendCapped"
"""A paid call a daily spend cap held back (handlers/common/spend.py), per system and kind."""
SPEND_CAP_REACHED = "SpendCapReached"
"""The first such call of a (kind, UTC day): counted once per cap and day, the series the
system's ``spend-cap`` alarm watches."""
SPEND_KINDS = ("model", "lookup", "sms")


def spend_capped(kind: str, *, first: bool) -> None:
    """Count one paid call held back by its daily cap; ``first``: the day's first for ``kind``."""
    if os.environ.get("POWERTOOLS_METRICS_DISABLED", "").lower() == "true":
        return
    system = system_of()
    label = kind if kind in SPEND_KINDS else OTHER
    _single(SPEND_CAPPED, 1, {"service": system, "kind": label})
    if first:
        _single(SPEND_CAP_REACHED, 1, {"service": system})


def _single(name: str, value: int, dimensions: Mapping[str, str]) -> None:
    with single_metric(
        name=name,
        unit=MetricUnit.Count,
        value=value,
        namespace=namespace(),
        default_dimensions=dict(dimensions),
    ):
        pass


def emf_metrics(line: str) -> list[tuple[str, str, float, dict[str, Any]]]:
    """(namespace, metric, value, dimensions) of every metric in one EMF log line, else []."""
    try:
        doc = json.loads(line)
    except (ValueError, TypeError):
        return []
    if not isinstance(doc, dict) or not isinstance(doc.get("_aws"), dict):
        return []
    found: list[tuple[str, str, float, dict[str, Any]]] = []
    for directive in doc["_aws"].get("CloudWatchMetrics") or []:
        keys = {k for group in directive.get("Dimensions") or [] for k in group}
        dims = {k: doc.get(k) for k in sorted(keys)}
        for definition in directive.get("Metrics") or []:
            raw = doc.get(definition.get("Name"))
            for v in raw if isinstance(raw, list) else [raw]:
                if isinstance(v, int | float):
                    found.append((directive.get("Namespace", ""), definition["Name"], v, dims))
    return found
