"""dm-merge: the public review links (Function URL), automatic merges (SQS ``dm-merges``) and
the weekly digest (``dm-digest-weekly`` schedule, ``{"action": "digest"}``).

The work is ``review.App``; this module reads the settings, builds the App once per container
with HubSpot as the CRM, and routes the event.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from handlers.common import batch, settings
from handlers.common.observability import logged
from handlers.duplicate_merger import contract
from handlers.duplicate_merger.crm import CrmWriter
from handlers.duplicate_merger.review import App

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


def hubspot() -> CrmWriter:
    """HubSpot with the CRM write credential, which only dm-merge's role may read."""
    from handlers.common.hubspot import token_from_secret
    from handlers.common.secrets import default_cache
    from handlers.duplicate_merger.crm import HubSpotCrm

    s = settings.current(contract.MergeSettings)
    secret = s.crm_write_secret
    return HubSpotCrm(
        lambda: token_from_secret(default_cache.get_string(secret)),
        s.crm_base_url,
        version=s.hubspot_api_version,
        on_unauthorized=lambda: default_cache.invalidate(secret),
    )


crm_factory: Callable[[], CrmWriter] = hubspot
"""The CRM the merges write (HubSpot); tests and the local sandbox put an in-memory one here."""
clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)  # noqa: E731
"""The time; tests and the sandbox move it."""


def build() -> App:
    """A new App over this container's settings (the seams above are read at each use)."""
    return App(
        settings.current(contract.MergeSettings), crm=lambda: crm_factory(), clock=lambda: clock()
    )


_app: App | None = None


def app() -> App:
    """This container's App, built on first use."""
    global _app
    if _app is None:
        _app = build()
    return _app


def reset() -> None:
    """Forget the cached app (tests: one moto context each)."""
    global _app
    _app = None


def own_url(context: Any) -> str:
    """This function's Function URL (for the digest's links), or ``public_url`` when set."""
    override = settings.current(contract.MergeSettings).public_url
    if override:
        return override.rstrip("/")
    from handlers.common.aws_clients import client

    answer = client("lambda").get_function_url_config(FunctionName=context.function_name)
    return str(answer["FunctionUrl"]).rstrip("/")


@logged
def handler(event: Mapping[str, Any], context: Any) -> Any:
    """Function URL request, SQS batch from dm-merges, or the digest schedule."""
    from handlers.common.observability import get_logger

    logger = get_logger()
    if isinstance(event.get("requestContext"), Mapping) and "http" in event["requestContext"]:
        return app().web(event)
    if isinstance(event.get("Records"), list):

        def one(record: SQSRecord) -> None:
            # Every failure here (busy included) is retried: the message returns to the queue.
            outcome = app().automatic(record.body)
            logger.info(
                "automatic merge", extra={"status": outcome.status, "merge_id": outcome.merge_id}
            )

        return batch.sqs_batch(dict(event), context, one)
    if event.get("action") == contract.DIGEST_ACTION:
        result = app().digest(own_url(context))
        logger.info("digest", extra=result)
        return result
    logger.warning("unknown event ignored")
    return {"ignored": True}
