"""Degradations kept between the function that took the fallback and the owner's next digest.

A fallback that must not be silent (handlers/common/metrics.py, ``DEGRADATIONS``) is counted as
a metric (alarmed) and noted here: one small item per (kind, function) in an existing table of
the system that already has a TTL attribute, keyed ``degraded#<kind>#<function>``. Each note
adds one to ``calls``, keeps ``first_at`` (since when), moves ``last_at`` and the TTL, and
keeps the latest ``detail`` (which model, which property). The digest reads the items of its
system with GetItem and names each one seen in its period, with what to do. Once the cause is
fixed, notes stop and the item expires ``retention_s`` after the last one.

The writer's grant is UpdateItem on that table limited to these exact partition keys
(``dynamodb:LeadingKeys``), and the reader's GetItem likewise, so a function that may degrade
cannot touch the table's business items through this path (DynamoDB Developer Guide, "Using IAM
policy conditions for fine-grained access control":
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from handlers.common import html_kit as kit
from handlers.common import model_call
from handlers.common.metrics import CRM_REJECTED, CUSTOMER_REDACTED, MODEL_REFUSED
from handlers.common.observability import get_logger
from handlers.common.spend import SpendGuard
from handlers.common.transitions import condition_failed

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

    from handlers.common.clock import Clock

PREFIX = "degraded#"
DEFAULT_RETENTION_S = 14 * 86400
"""An item outlives its last note by two weeks: a weekly digest still names it once."""

BEDROCK_ACCESS_PAGE = "https://docs.aws.amazon.com/bedrock/latest/userguide/model-access.html"
SHOPIFY_PCD_PAGE = "https://shopify.dev/docs/apps/launch/protected-customer-data"
HUBSPOT_REQUIRED_PAGE = "https://developers.hubspot.com/changelog/crm-api-write-validation-enforcement"

ADVICE: Mapping[str, str] = {
    MODEL_REFUSED: (
        "Bedrock refused the model for access, so the rules decided instead. Enable access to "
        "this model in the Bedrock console (Model access, in the function's Region; Anthropic "
        f"models also ask for a one-time use-case form): {BEDROCK_ACCESS_PAGE}"
    ),
    CUSTOMER_REDACTED: (
        "Shopify sent these orders with the customer's name, email and phone redacted, so no "
        "nudge could be sent and none was guessed. Request protected customer data access "
        "(name, email, phone) for the app in the Partner or Dev Dashboard, in the app's "
        f"protected customer data settings: {SHOPIFY_PCD_PAGE}"
    ),
    CRM_REJECTED: (
        "HubSpot refused to create these leads because the portal requires a property the form "
        "does not fill. The leads are kept and retried; make the property optional for API "
        "writes in HubSpot (Settings, Properties, or the Create Record form), or map a value "
        f"to it, and they go through on the next retry: {HUBSPOT_REQUIRED_PAGE}"
    ),
}
"""What the owner is told to do, per kind, with the provider's page."""

PAGE_LABEL: Mapping[str, str] = {
    MODEL_REFUSED: "Bedrock guide: access to models",
    CUSTOMER_REDACTED: "Shopify guide: protected customer data",
    CRM_REJECTED: "HubSpot: required properties on API writes",
}
"""What the provider's page (the URL ending each advice) is called where the HTML links it: a
bare URL says nothing and, unbroken, runs off a phone's screen."""

WHAT: Mapping[str, str] = {
    MODEL_REFUSED: "Model refused",
    CUSTOMER_REDACTED: "Shopify customer redacted",
    CRM_REJECTED: "HubSpot required property",
}


CLI_AVAILABILITY_PAGE = "https://docs.aws.amazon.com/cli/latest/reference/bedrock/get-foundation-model-availability.html"


def model_catalog(region: str) -> str:
    """The Bedrock console's Model catalog in ``region``, where access to a model is requested."""
    return f"https://{region}.console.aws.amazon.com/bedrock/home?region={region}#/model-catalog"


def model_access_fix(model_id: str, region: str) -> list[str]:
    """The exact steps for the person who deployed the stack when Bedrock refuses ``model_id``
    (an inference profile id or a model id) in ``region``: where to ask, and how to check
    (the API ``make preflight`` reads: GetFoundationModelAvailability, ``CLI_AVAILABILITY_PAGE``)."""
    base = model_call.foundation_model(model_id)
    return [
        f"1. Open the Bedrock console's Model catalog in {region}: {model_catalog(region)}",
        f"2. Open {base} and request access (it subscribes through AWS Marketplace); for an "
        "Anthropic model, also submit the one-time use-case form.",
        f"3. Check: aws bedrock get-foundation-model-availability --model-id {base} --region "
        f"{region} (authorizationStatus AUTHORIZED, the others AVAILABLE), or make preflight.",
    ]


def key(kind: str, function: str) -> str:
    """The partition key of one (kind, function) item."""
    if kind not in ADVICE:
        raise KeyError(kind)
    return f"{PREFIX}{kind}#{function}"


@dataclass(frozen=True)
class Degradation:
    """What a digest says about one kind of degradation of one function."""

    kind: str
    function: str
    first_at: int
    last_at: int
    calls: int
    detail: str
    notified_at: int = 0
    """When an owner notice last named it (0: never); rrs's daily notice, ``Ledger.mark_notified``."""

    def line(self, zone: str = "UTC") -> str:
        """One plain sentence: what, which, since when, how many."""
        def when(ts: int) -> str:
            return dt.datetime.fromtimestamp(ts, dt.UTC).astimezone(ZoneInfo(zone)).strftime(
                "%d %b %Y %H:%M"
            )

        which = f" ({self.detail})" if self.detail else ""
        return (
            f"{WHAT[self.kind]}{which} in {self.function}: {self.calls} time"
            f"{'s' if self.calls != 1 else ''} since {when(self.first_at)}, last "
            f"{when(self.last_at)} ({zone})"
        )


@dataclass(frozen=True)
class Ledger:
    """The degradation items of one system's table.

    Attributes:
        table: The table (its partition key is a string attribute named ``key_attribute``).
        key_attribute: The table's partition key name.
        ttl_attribute: The table's TTL attribute (epoch seconds).
        retention_s: How long an item outlives its last note.
    """

    table: Table
    key_attribute: str
    ttl_attribute: str
    retention_s: int = DEFAULT_RETENTION_S

    def note(self, kind: str, function: str, now: float, detail: str = "") -> None:
        """Count one more degradation of ``kind`` in ``function`` (one UpdateItem: ADD and SET
        only, so concurrent notes never lose a count).

        Never raises: the metric (counted before, alarmed) is the signal that must not be lost,
        and the fallback's own work (a 200 to Shopify, a no-fit record) must not fail for a
        note. A failed note is logged."""
        try:
            self._update(kind, function, now, detail)
        except Exception:
            get_logger().exception("degradation not noted for the digest", extra={"kind": kind})

    def _update(self, kind: str, function: str, now: float, detail: str) -> None:
        self.table.update_item(
            Key={self.key_attribute: key(kind, function)},
            UpdateExpression=(
                "ADD calls :one SET first_at = if_not_exists(first_at, :now), last_at = :now, "
                "detail = :detail, #ttl = :expires"
            ),
            ExpressionAttributeNames={"#ttl": self.ttl_attribute},
            ExpressionAttributeValues={
                ":one": 1,
                ":now": int(now),
                ":detail": detail[:200],
                ":expires": int(now) + self.retention_s,
            },
        )

    def seen(
        self, watched: Iterable[tuple[str, str]], since: float
    ) -> list[Degradation]:
        """The degradations of ``watched`` (kind, function) noted at or after ``since``."""
        found: list[Degradation] = []
        for kind, function in watched:
            item: Mapping[str, Any] | None = self.table.get_item(
                Key={self.key_attribute: key(kind, function)}, ConsistentRead=True
            ).get("Item")
            if not item or int(item.get("last_at", 0)) < since:
                continue
            found.append(
                Degradation(
                    kind=kind,
                    function=function,
                    first_at=int(item.get("first_at", item.get("last_at", 0))),
                    last_at=int(item["last_at"]),
                    calls=int(item.get("calls", 0)),
                    detail=str(item.get("detail", "")),
                    notified_at=int(item.get("notified_at", 0)),
                )
            )
        return found

    def mark_notified(self, kind: str, function: str, now: float) -> None:
        """Record that an owner notice named this item at ``now``, for a system whose notice
        goes once per period while notes keep coming (rrs-sweep). Conditional on the item
        existing, so an item that expired in between is not brought back without its count."""
        try:
            self.table.update_item(
                Key={self.key_attribute: key(kind, function)},
                UpdateExpression="SET notified_at = :now",
                ConditionExpression=f"attribute_exists({self.key_attribute})",
                ExpressionAttributeValues={":now": int(now)},
            )
        except Exception as err:
            if not condition_failed(err):
                raise


def fix_lines(d: Degradation, region: str) -> list[str]:
    """What the person who deployed the stack does about ``d``: a refused model's exact steps
    (``model_access_fix``), else the kind's advice with the provider's page."""
    if d.kind == MODEL_REFUSED and d.detail:
        return model_access_fix(d.detail, region)
    return [ADVICE[d.kind]]


def deployer_mail(
    found: Sequence[Degradation], *, system: str, region: str, zone: str = "UTC",
    subject: str = "", lead: str = "",
) -> kit.Mail:
    """The notice for ``alertEmail`` (whoever deployed the stack): each fallback taken, since
    when, how often, and the fix; ``lead`` says what the system does meanwhile. The owner's mail
    says only what it changes for the business (``owner_lines``)."""
    what = ", ".join(dict.fromkeys(WHAT[d.kind].lower() for d in found))
    subject = (subject or f"{system}: running degraded in {region} ({what})")[:150]
    kinds = list(dict.fromkeys(d.kind for d in found))
    text = [subject, ""] + ([lead, ""] if lead else [])
    parts: list[kit.Html] = [kit.para(lead, strong=True)] if lead else []
    if MODEL_REFUSED in kinds:
        parts.append(kit.actions(kit.button(model_catalog(region), f"Model catalog in {region}",
                                            primary=True, method="get")))
    for d in found:
        steps = fix_lines(d, region)
        text += [d.line(zone), "The fix:", *steps, ""]
        parts += [kit.para(d.line(zone), strong=not lead), kit.heading("The fix")]
        parts += [kit.para(_html_step(step, d.kind)) for step in steps]
    text += [f"{PAGE_LABEL[k]}: {ADVICE[k].rpartition(': ')[2]}" for k in kinds]
    parts += [kit.para(kit.link(ADVICE[k].rpartition(": ")[2], PAGE_LABEL[k])) for k in kinds]
    said = ("The owner is told only what this changes for the business. You get this at most once a "
            "day while it goes on, and none once it is fixed.")
    text += ["", said]
    parts.append(kit.detail(f"{said} Times in {zone}."))
    return kit.mail(subject, text, kit.join(parts))


def _html_step(step: str, kind: str) -> str:
    """A fix step for the HTML part: the address it names is the button or link beside it
    (a bare URL runs off a phone's screen)."""
    if step.startswith("1. Open the Bedrock"):
        return "1. Open the Model catalog (the button above)."
    if step == ADVICE[kind]:
        return step.rpartition(": ")[0] + " (the link below)."
    return step


def owner_lines(found: Iterable[Degradation], effects: Mapping[str, str], alert_email: str) -> list[str]:
    """The owner's digest section: what each fallback changes for the business (``effects``,
    the system's words per kind) and who has the fix; nothing to do in AWS or a provider's console."""
    kinds = list(dict.fromkeys(d.kind for d in found))
    if not kinds:
        return []
    return [*(effects[k] for k in kinds),
            f"The fix has gone to {alert_email}, who set up this system; nothing for you to do."]


def owner_html(found: Iterable[Degradation], effects: Mapping[str, str], alert_email: str) -> kit.Html:
    """``owner_lines`` for the digest's HTML part (empty when nothing degraded)."""
    lines = owner_lines(found, effects, alert_email)
    if not lines:
        return kit.Html("")
    return kit.join([kit.para(lines[0], strong=True), *(kit.para(line) for line in lines[1:])])


class NotingRefusals:
    """A Converse client that notes a refused model before ``model_call`` takes its fallback.

    The model callers of a function (often a few modules deep) are handed this client by the
    function's composition root instead of the bare one, so a refusal reaches the system's
    ledger without any caller knowing about ledgers: ``model_call`` still counts
    ``ModelRefused`` and returns ``REFUSED``; this only adds the note (which model, since when).

    Attributes:
        inner: The real client; None for the function's cached ``bedrock-runtime`` client.
        ledger: The system's degradation notes.
        function: The function's name (the note's key).
        clock: The function's one clock.
    """

    def __init__(
        self, inner: model_call.ConverseClient | None, ledger: Ledger, function: str, clock: Clock
    ) -> None:
        self.inner = inner
        self.ledger = ledger
        self.function = function
        self.clock = clock

    def converse(self, **kwargs: Any) -> Mapping[str, Any]:
        client = self.inner if self.inner is not None else model_call.bedrock_runtime()
        try:
            return client.converse(**kwargs)
        except Exception as err:
            if model_call.error_code(err) == model_call.REFUSED_CODE:
                model = str(kwargs.get("modelId") or "")
                self.ledger.note(MODEL_REFUSED, self.function, self.clock().timestamp(), model)
            raise


class CappedModelCalls:
    """A Converse client that reserves one model call before each call.

    A function's composition root hands its model callers this client (around the one it had),
    so no caller knows about caps (handlers/common/spend.py): ``model_call`` turns CapReached into ``NoValidAnswer``
    with reason ``capped``, and the caller takes its rules path.
    """

    def __init__(self, inner: model_call.ConverseClient | None, guard: SpendGuard) -> None:
        self.inner = inner
        self.guard = guard

    def converse(self, **kwargs: Any) -> Mapping[str, Any]:
        self.guard.reserve("model")
        client = self.inner if self.inner is not None else model_call.bedrock_runtime()
        return client.converse(**kwargs)


def model_client(
    inner: model_call.ConverseClient | None,
    ledger: Ledger,
    function: str,
    clock: Clock,
    daily_model_calls: int,
) -> CappedModelCalls:
    """The Converse client a model-calling function's composition root hands its callers: each
    call first reserves one of the system's daily model calls (handlers/common/spend.py, its
    counters in the ledger's table), then a refused model is noted (``NotingRefusals``)."""
    guard = SpendGuard.beside(ledger, {"model": daily_model_calls}, clock)
    return CappedModelCalls(NotingRefusals(inner, ledger, function, clock), guard)
