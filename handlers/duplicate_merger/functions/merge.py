"""dm-merge: the public review links (Function URL), automatic merges (SQS ``dm-merges``), the
weekly digest (``dm-digest-weekly`` schedule, ``{"action": "digest"}``) and the sweep of claims
whose lease ran out (``dm-sweep`` schedule, ``{"action": "sweep"}``).

The work is ``review.App``; this module wires it with HubSpot as the CRM and routes the event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from handlers.common import aws_clients, batch, entry
from handlers.common.clock import Clock
from handlers.common.function_url import Request
from handlers.common.observability import get_logger
from handlers.duplicate_merger import contract
from handlers.duplicate_merger.crm import CrmWriter, hubspot
from handlers.duplicate_merger.review import App

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


def wire(
    config: contract.MergeSettings,
    clock: Clock,
    *,
    crm: Callable[[], CrmWriter] | None = None,
) -> App:
    """The App; ``crm`` makes the CRM the merges write (HubSpot unless tests or the sandbox
    give an in-memory one), called only when a merge needs it."""

    def write_crm() -> CrmWriter:
        return hubspot(
            config.crm_write_secret, config.crm_base_url, config.hubspot_api_version, clock
        )

    return App(config, crm=crm or write_crm, clock=clock)


def own_url(app: App, context: Any) -> str:
    """This function's Function URL (for the digest's links), or ``public_url`` when set."""
    override = app.env.public_url
    if override:
        return override.rstrip("/")
    answer = aws_clients.client("lambda").get_function_url_config(
        FunctionName=context.function_name
    )
    return str(answer["FunctionUrl"]).rstrip("/")


def run(app: App, event: Request | Mapping[str, Any], context: Any, clock: Clock) -> Any:
    """Function URL request, SQS batch from dm-merges, or the digest or sweep schedule."""
    logger = get_logger()
    if isinstance(event, Request):
        return app.web(event)
    if isinstance(event.get("Records"), list):

        def one(record: SQSRecord) -> None:
            # Every failure here (busy included) is retried: the message returns to the queue.
            outcome = app.automatic(record.body)
            logger.info(
                "automatic merge", extra={"status": outcome.status, "merge_id": outcome.merge_id}
            )

        return batch.sqs_batch(dict(event), context, one)
    if event.get("action") == contract.SWEEP_ACTION:
        result = app.sweep()
        logger.info("sweep of expired claims", extra=result)
        return result
    if event.get("action") == contract.DIGEST_ACTION:
        result = app.digest(own_url(app, context))
        logger.info("digest", extra=result)
        return result
    logger.warning("unknown event ignored")
    return {"ignored": True}


handler = entry.handler(
    __name__, contract.MergeSettings, wire, run, url="beside_other_triggers"
)
