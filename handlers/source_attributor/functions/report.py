"""ls-report: the attribution report behind an AWS_IAM Function URL (logic in ``reporting``),
and, when the stack schedules it, the owner's weekly mail (``report_mail``) with its signed
link to the same report as a page (``report_link``)."""

from __future__ import annotations

from typing import Any

from handlers.common import entry, settings
from handlers.common.aws_clients import client
from handlers.common.clock import Clock
from handlers.common.function_url import Request
from handlers.common.link_tokens import Keyring
from handlers.common.secrets import get_secret
from handlers.source_attributor import contract, report_link, report_mail, reporting, stored_report
from handlers.source_attributor.stored_report import DynamoReports


def wire(config: contract.ReportSettings, clock: Clock) -> reporting.ReportApp:
    return reporting.app(config, clock)


def run(
    app: reporting.ReportApp, event: Request | dict[str, Any], context: Any, clock: Clock
) -> Any:
    """Function URL (AWS_IAM) requests; the schedule's ``{"job": "ls-report"}`` sends the mail."""
    if isinstance(event, Request):
        return app(event)
    if event.get("job") != contract.REPORT:
        raise ValueError("ls-report runs for its Function URL or its schedule's job only")
    config = settings.current(contract.ReportSettings)
    if not (config.sender_email and config.report_recipient):
        raise RuntimeError("ls-report was scheduled without SENDER_EMAIL and REPORT_RECIPIENT")
    link = keep = None
    if config.report_page_url and config.report_link_key_secret and config.reports_table:
        keyring = Keyring.from_secret_string(get_secret(config.report_link_key_secret))
        now = clock().timestamp()
        link = report_link.signer(config.report_page_url, keyring, days=config.report_link_days, now=now)
        keep = stored_report.keeper(
            DynamoReports(config.reports_table), int(now) + config.report_link_days * 86_400
        )
    sent = report_mail.send_weekly(
        app.store,
        client("sesv2"),
        sender=config.sender_email,
        recipient=config.report_recipient,
        today=clock().date(),
        workers=app.workers,
        link=link,
        keep=keep,
    )
    return {"from": sent.start.isoformat(), "to": sent.end.isoformat(),
            "enquiries": sent.enquiries, "message_id": sent.message_id}


handler = entry.handler(
    __name__, contract.ReportSettings, wire, run, url="beside_other_triggers"
)
