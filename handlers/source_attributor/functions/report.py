"""ls-report: the attribution report behind an AWS_IAM Function URL (logic in ``reporting``)."""

from __future__ import annotations

from typing import Any

from handlers.common import settings
from handlers.common.observability import logged
from handlers.source_attributor import contract, reporting

_app: reporting.ReportApp | None = None


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Function URL (AWS_IAM) entry point."""
    global _app
    if _app is None:
        _app = reporting.app(settings.current(contract.ReportSettings))
    return _app(event)
