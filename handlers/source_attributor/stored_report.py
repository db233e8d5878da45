"""The weekly mail's report, stored once per period, so a view of its page costs one read.

The link in the owner's mail sits in a mailbox and can be forwarded; when each view recomputed
the week (about two Queries per enquiry, plus one), one valid link could cost thousands of
reads a minute. So ls-report stores the report it mails (item ``report`` of ``ls-reports``,
keyed by the period ``report_link.subject`` names), and ls-report-page answers a view with:

1. one UpdateItem on the small ``views`` item, adding one unless the period's views reached
   the link's limit (``reportLinkViews``): past it the view is refused, nothing is read;
2. one GetItem of the stored report.

A period stored nowhere (mailed before ls-reports existed) is computed on its first view and
stored, first writer wins, so every later view is that read. The page therefore shows what the
mail counted. Both items expire (TTL) with the link.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from botocore.exceptions import ClientError

from handlers.common.aws_clients import table
from handlers.common.transitions import condition_failed, put_if_absent
from handlers.source_attributor import report_link
from handlers.source_attributor.attribution import Report
from handlers.source_attributor.contract import REPORT_TTL

REPORT_ITEM = "report"
VIEWS_ITEM = "views"


class ReportPages(Protocol):
    """What ls-report stores and ls-report-page reads and counts."""

    def count_view(self, period: str, limit: int, expires_at: int) -> bool:
        """Count one view of ``period``'s page; False (nothing counted) past ``limit``."""
        ...

    def stored(self, period: str) -> Report | None:
        """The report stored for ``period``; None when none is."""
        ...

    def store(self, period: str, report: Report, expires_at: int, *, replace: bool) -> None:
        """Store ``period``'s report (``replace``: over one stored already, as a re-sent mail
        does; otherwise the first writer wins)."""
        ...


def keeper(pages: ReportPages, expires_at: int) -> Callable[[Report], None]:
    """What ls-report stores the mailed report with: over any earlier one (a re-sent mail
    counts again), until its link expires."""

    def keep(report: Report) -> None:
        pages.store(report_link.subject(report.start, report.end), report, expires_at, replace=True)

    return keep


@dataclass
class DynamoReports:
    """``ls-reports`` by name."""

    table_name: str

    def count_view(self, period: str, limit: int, expires_at: int) -> bool:
        try:
            table(self.table_name).update_item(
                Key={"period": period, "item": VIEWS_ITEM},
                UpdateExpression="ADD #v :one SET #t = :ttl",
                ConditionExpression="attribute_not_exists(#v) OR #v < :limit",
                ExpressionAttributeNames={"#v": "views", "#t": REPORT_TTL},
                ExpressionAttributeValues={":one": 1, ":limit": limit, ":ttl": expires_at},
            )
        except ClientError as err:
            if condition_failed(err):
                return False
            raise
        return True

    def stored(self, period: str) -> Report | None:
        item = table(self.table_name).get_item(
            Key={"period": period, "item": REPORT_ITEM}
        ).get("Item")
        return None if item is None else Report.from_json(json.loads(str(item["document"])))

    def store(self, period: str, report: Report, expires_at: int, *, replace: bool) -> None:
        item: dict[str, str | int] = {
            "period": period,
            "item": REPORT_ITEM,
            "document": json.dumps(report.to_json(), separators=(",", ":")),
            REPORT_TTL: expires_at,
        }
        if replace:
            table(self.table_name).put_item(Item=item)
        else:
            put_if_absent(table(self.table_name), item, "item")
