"""The customer sheet behind a port (a CSV export URL or one S3 object), and its mirror.

Columns (header names are matched case-insensitively, spaces as underscores): ``customer_id``
(or ``id``), ``name``, ``email``, ``phone`` (or ``mobile``), ``timezone``, ``channel``
(``email``/``sms``), ``prior_sentiment`` (``positive``/``neutral``/``negative``),
``past_complaints`` (a count) and ``do_not_ask`` (yes/true/1). Other columns are ignored.
A row without an id is skipped; an unusable email or phone is dropped from its row, not fatal.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from handlers.common.aws_clients import client
from handlers.common.observability import get_logger
from handlers.review_requests.contacts import try_email, try_phone
from handlers.review_requests.domain import SENTIMENTS, Channel
from handlers.review_requests.timing import iso

if TYPE_CHECKING:
    from handlers.review_requests.store import Customers

MAX_SHEET_BYTES = 10 * 1024 * 1024
FETCH_TIMEOUT_S = 20
MAX_PROBLEMS_LOGGED = 20
_ALIASES = {"id": "customer_id", "mobile": "phone", "customer": "customer_id"}
_TRUE = {"yes", "y", "true", "1", "x"}


class SheetSource(Protocol):
    """Where the sheet's CSV text comes from."""

    def fetch(self) -> str:
        """The whole sheet as CSV text."""
        ...


class CsvUrlSource:
    """A published CSV export URL (e.g. a spreadsheet's "publish to web" CSV link)."""

    def __init__(self, url: str) -> None:
        if not url.startswith("https://"):
            raise ValueError("the sheet URL must be https")
        self.url = url

    def fetch(self) -> str:
        request = urllib.request.Request(self.url, headers={"Accept": "text/csv"})  # noqa: S310
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as answer:  # noqa: S310
            data = answer.read(MAX_SHEET_BYTES + 1)
        if len(data) > MAX_SHEET_BYTES:
            raise ValueError(f"the sheet exceeds {MAX_SHEET_BYTES} bytes")
        return bytes(data).decode("utf-8-sig")


class S3ObjectSource:
    """One object in S3 (the role may read that object only)."""

    def __init__(self, bucket: str, key: str) -> None:
        self.bucket = bucket
        self.key = key

    def fetch(self) -> str:
        answer = client("s3").get_object(Bucket=self.bucket, Key=self.key)
        data = answer["Body"].read(MAX_SHEET_BYTES + 1)
        if len(data) > MAX_SHEET_BYTES:
            raise ValueError(f"the sheet exceeds {MAX_SHEET_BYTES} bytes")
        return bytes(data).decode("utf-8-sig")


def source_for(spec: str | None) -> SheetSource | None:
    """The adapter for the ``sheetSource`` setting; None when no sheet is configured."""
    if not spec:
        return None
    if spec.startswith("s3://"):
        bucket, _, key = spec.removeprefix("s3://").partition("/")
        return S3ObjectSource(bucket, key)
    return CsvUrlSource(spec)


@dataclass(frozen=True)
class CustomerRow:
    """One row, normalised: the fields written to rrs-customers and their hash."""

    customer_id: str
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def row_hash(self) -> str:
        text = json.dumps(self.fields, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def _header(name: str) -> str:
    key = "_".join(name.strip().lower().split())
    return _ALIASES.get(key, key)


def parse_rows(text: str, phone_region: str) -> tuple[list[CustomerRow], list[str]]:
    """The usable rows and a list of problems (row number and what was wrong)."""
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None:
        return [], ["the sheet has no header row"]
    reader.fieldnames = [_header(n) for n in reader.fieldnames]
    rows: dict[str, CustomerRow] = {}
    problems: list[str] = []
    for number, raw in enumerate(reader, start=2):
        values = {k: (v or "").strip() for k, v in raw.items() if isinstance(k, str)}
        customer_id = values.get("customer_id", "")
        if not customer_id:
            problems.append(f"row {number}: no customer_id")
            continue
        email = try_email(values.get("email"))
        if values.get("email") and email is None:
            problems.append(f"row {number}: unusable email")
        phone = try_phone(values.get("phone"), phone_region)
        if values.get("phone") and phone is None:
            problems.append(f"row {number}: unusable phone")
        sentiment = values.get("prior_sentiment", "").lower()
        channel = values.get("channel", "").lower()
        complaints = values.get("past_complaints", "")
        fields: dict[str, Any] = {
            "name": values.get("name", "")[:120],
            "email": email,
            "phone": phone,
            "timezone": values.get("timezone", "")[:64],
            "channel": channel if channel in (Channel.EMAIL.value, Channel.SMS.value) else "",
            "prior_sentiment": sentiment if sentiment in SENTIMENTS else "",
            "past_complaints": int(complaints) if complaints.isdigit() else 0,
            "do_not_ask": values.get("do_not_ask", "").lower() in _TRUE,
        }
        rows[customer_id] = CustomerRow(customer_id[:200], fields)
    return list(rows.values()), problems


def mirror(
    source: SheetSource, customers: Customers, phone_region: str, now: dt.datetime
) -> dict[str, int]:
    """Write the rows whose content changed, and only those.

    The stored hashes are read first (one Scan, billed by the data read: about 12 read units
    for 300 rows, against 300 write units for writing every row). A conditional write whose
    condition fails is still billed as a write (Amazon DynamoDB Developer Guide, "Working with
    items and attributes", conditional writes:
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html#WorkingWithItems.ConditionalUpdate),
    so the hash condition on the write stays only as the guard against a concurrent sync.
    """
    rows, problems = parse_rows(source.fetch(), phone_region)
    stored = customers.hashes()
    changed = 0
    for row in rows:
        if stored.get(row.customer_id) == row.row_hash:
            continue
        if customers.upsert(row.customer_id, row.fields, row.row_hash, iso(now)):
            changed += 1
    if problems:
        get_logger().warning(
            "sheet rows with problems",
            extra={"count": len(problems), "first": problems[:MAX_PROBLEMS_LOGGED]},
        )
    return {"rows": len(rows), "changed": changed, "problems": len(problems)}
