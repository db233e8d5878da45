"""ls-report: the attribution report behind an AWS_IAM Function URL (logic in ``reporting``),
and, when the stack schedules it, the owner's weekly mail (``report_mail``) with its signed
link to the same report as a page (``report_link``)."""

from __future__ import annotations

from typing import Any

from handlers.common import entry, settings
from handlers.common.aws_clients import client
from handlers.common.clock import Clock
from handlers.common.link_tokens import Keyring
from handlers.common.secrets import get_secret
from handlers.source_attributor import contract, report_link, report_mail, reporting


def wire(config: contract.ReportSettings, clock: Clock) -> reporting.ReportApp:
    return reporting.app(config, clock)


def run(app: reporting.ReportApp, event: dict[str, Any], context: Any, clock: Clock) -> Any:
    """Function URL (AWS_IAM) requests; the schedule's ``{"job": "ls-report"}`` sends the mail."""
    if event.get("job") != contract.REPORT:
        return app(event)
    config = settings.current(contract.ReportSettings)
    if not (config.sender_email and config.report_recipient):
        raise RuntimeError("ls-report was scheduled without SENDER_EMAIL and REPORT_RECIPIENT")
    link = None
    if config.report_page_url and config.report_link_key_secret:
        keyring = Keyring.from_secret_string(get_secret(config.report_link_key_secret))
        link = report_link.signer(
            config.report_page_url, keyring, days=config.report_link_days, now=clock().timestamp()
        )
    sent = report_mail.send_weekly(
        app.store,
        client("sesv2"),
        sender=config.sender_email,
        recipient=config.report_recipient,
        today=clock().date(),
        workers=app.workers,
        link=link,
    )
    return {"from": sent.start.isoformat(), "to": sent.end.isoformat(),
            "enquiries": sent.enquiries, "message_id": sent.message_id}


handler = entry.handler(__name__, contract.ReportSettings, wire, run)
