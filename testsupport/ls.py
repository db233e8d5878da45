"""Test doubles of the lead source attributor: the three store ports and the stored reports
in memory."""

from __future__ import annotations

import bisect
import threading
from dataclasses import replace

from handlers.source_attributor.attribution import Report
from handlers.source_attributor.records import Enquiry, IdentityRow, Touch


class InMemoryStore:
    """All three ports over dictionaries, with DynamoDB's conditional-write semantics."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.touch_rows: dict[str, dict[str, Touch]] = {}
        self._touch_order: dict[str, list[str]] = {}
        self.identity_table: dict[str, dict[str, IdentityRow]] = {}
        self.enquiry_rows: dict[str, dict[str, Enquiry]] = {}

    def _insert_touch(self, touch: Touch) -> bool:
        rows = self.touch_rows.setdefault(touch.visitor_id, {})
        if touch.at in rows:
            return False
        rows[touch.at] = touch
        bisect.insort(self._touch_order.setdefault(touch.visitor_id, []), touch.at)
        return True

    def put_touch(self, touch: Touch) -> bool:
        with self._lock:
            return self._insert_touch(touch)

    def put_enquiry(self, enquiry: Enquiry, asked: Touch | None) -> bool:
        with self._lock:
            month = self.enquiry_rows.setdefault(enquiry.month, {})
            if enquiry.enquiry_id in month:
                return False
            if asked is not None and asked.at in self.touch_rows.get(asked.visitor_id, {}):
                raise RuntimeError("transaction cancelled: the asked touch exists")
            month[enquiry.enquiry_id] = enquiry
            if asked is not None:
                self._insert_touch(asked)
            return True

    def identity_rows(self, identity_key: str) -> dict[str, IdentityRow]:
        with self._lock:
            return dict(self.identity_table.get(identity_key, {}))

    def linked_visitors(self, visitor_id: str) -> set[str]:
        with self._lock:
            rows = self.touch_rows.get(visitor_id, {}).values()
            return {t.linked_visitor_id for t in rows if t.linked_visitor_id} - {visitor_id}

    def link(self, identity_key: str, visitor_id: str, linked_by: str, at: str, via: str) -> None:
        with self._lock:
            rows = self.identity_table.setdefault(identity_key, {})
            row = rows.get(visitor_id) or IdentityRow(identity_key, visitor_id)
            if not row.linked_no_later_than(at, via):
                rows[visitor_id] = replace(row, linked_by=linked_by, linked_at=at, linked_via=via)

    def mark_enquirer(self, identity_key: str, visitor_id: str, enquiry_id: str, at: str) -> None:
        with self._lock:
            rows = self.identity_table.setdefault(identity_key, {})
            row = rows.get(visitor_id) or IdentityRow(identity_key, visitor_id)
            if not row.enquired_no_later_than(at, enquiry_id):
                rows[visitor_id] = replace(row, enquiry_id=enquiry_id, enquiry_at=at)

    def keep_until(self, identity_key: str, visitor_id: str, expires: int) -> None:
        with self._lock:
            rows = self.identity_table.setdefault(identity_key, {})
            row = rows.get(visitor_id) or IdentityRow(identity_key, visitor_id)
            if row.ttl < expires:
                rows[visitor_id] = replace(row, ttl=expires)

    def enquiries(self, month: str) -> list[Enquiry]:
        with self._lock:
            return sorted(self.enquiry_rows.get(month, {}).values(), key=lambda e: e.enquiry_id)

    def identity_visitors(self, identity_key: str) -> list[str]:
        with self._lock:
            return sorted(self.identity_table.get(identity_key, {}))

    def touches(self, visitor_id: str) -> list[Touch]:
        with self._lock:
            rows = self.touch_rows.get(visitor_id, {})
            return [rows[at] for at in self._touch_order.get(visitor_id, [])]


class InMemoryReports:
    """``stored_report.ReportPages`` over dictionaries: the views count and the reports, with
    the reads it was asked for counted."""

    def __init__(self) -> None:
        self.views: dict[str, int] = {}
        self.reports: dict[str, Report] = {}
        self.reads = 0

    def count_view(self, period: str, limit: int, expires_at: int) -> bool:
        if self.views.get(period, 0) >= limit:
            return False
        self.views[period] = self.views.get(period, 0) + 1
        return True

    def stored(self, period: str) -> Report | None:
        self.reads += 1
        return self.reports.get(period)

    def store(self, period: str, report: Report, expires_at: int, *, replace: bool) -> None:
        if replace or period not in self.reports:
            self.reports[period] = report
