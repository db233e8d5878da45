"""Reporting (ls-report, behind an AWS_IAM Function URL): the attribution report, cached.

``GET ?from=YYYY-MM-DD&to=YYYY-MM-DD&mode=strict|lenient&include_asked=true&format=json|csv``
(dates inclusive, UTC; default the last 30 days, strict, JSON). Nothing is precomputed: the
report walks the rows on request, then keeps the rendered answer in this container for
``REPORT_CACHE_SECONDS`` keyed by (range, mode, format) and tells HTTP caches the same through
``Cache-Control: private, max-age``. The role may only Query the three tables.

Settings: ``contract.ReportSettings``.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from handlers.common.clock import Clock, utc_now
from handlers.common.function_url import Request, RequestError, json_error
from handlers.common.observability import get_logger
from handlers.source_attributor.attribution import Mode, Report, attribute
from handlers.source_attributor.contract import ReportSettings
from handlers.source_attributor.records import Enquiry, Touch, iso
from handlers.source_attributor.store import DynamoStore, ReportStore

Format = Literal["json", "csv"]
DEFAULT_DAYS = 30
MAX_DAYS = 366
CACHE_ENTRIES = 64
QUERY_WORKERS = 10
"""Concurrent Queries while reading paths: boto3's default connection pool holds 10."""


@dataclass(frozen=True)
class ReportQuery:
    """What was asked: the in-process cache key. ``include_asked`` is part of the mode."""

    start: dt.date
    end: dt.date
    mode: Mode
    include_asked: bool
    format: Format


def _date(query: Mapping[str, str], name: str, default: dt.date) -> dt.date:
    text = query.get(name)
    if text is None or text == "":
        return default
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise RequestError(400, "invalid_date", f"{name} must be a date YYYY-MM-DD") from None


def _choice(query: Mapping[str, str], name: str, allowed: tuple[str, ...]) -> str:
    value = (query.get(name) or allowed[0]).lower()
    if value not in allowed:
        raise RequestError(400, f"invalid_{name}", f"{name} must be one of {', '.join(allowed)}")
    return value


def parse_query(query: Mapping[str, str], today: dt.date) -> ReportQuery:
    """The report asked for (the request's query string); RequestError (400) on a bad
    parameter."""
    end = _date(query, "to", today)
    start = _date(query, "from", end - dt.timedelta(days=DEFAULT_DAYS - 1))
    if start > end:
        raise RequestError(400, "invalid_range", "from must not be after to")
    if (end - start).days + 1 > MAX_DAYS:
        raise RequestError(400, "invalid_range", f"a report spans at most {MAX_DAYS} days")
    mode: Mode = "lenient" if _choice(query, "mode", ("strict", "lenient")) == "lenient" else "strict"
    asked = _choice(query, "include_asked", ("false", "true", "0", "1")) in ("true", "1")
    fmt: Format = "csv" if _choice(query, "format", ("json", "csv")) == "csv" else "json"
    return ReportQuery(start, end, mode, asked or mode == "lenient", fmt)


def owner_query(start: dt.date, end: dt.date) -> ReportQuery:
    """The report as the owner reads it (the weekly mail and its page): strict mode, the
    document's default, without the "how did you hear" answers."""
    return ReportQuery(start, end, "strict", False, "json")


def months_between(start: dt.date, end: dt.date) -> list[str]:
    """The enquiries partitions (``YYYY-MM``) a date range touches."""
    months: list[str] = []
    year, month = start.year, start.month
    while (year, month) <= (end.year, end.month):
        months.append(f"{year:04d}-{month:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return months


class PathReader:
    """Reads each identity and each visitor's touches once per report.

    ``prefetch`` issues those Queries from ``workers`` threads: a report over a few thousand
    enquiries is a few thousand small Queries, and waiting for them one by one is what would
    make it slow against DynamoDB.
    """

    def __init__(self, store: ReportStore, workers: int = 1) -> None:
        self.store = store
        self.workers = max(1, workers)
        self._members: dict[str, list[str]] = {}
        self._touches: dict[str, list[Touch]] = {}

    @property
    def queries(self) -> int:
        """Identity and touch Queries made so far."""
        return len(self._members) + len(self._touches)

    def _fetch(self, keys: list[str], read: Callable[[str], Any], into: dict[str, Any]) -> None:
        if self.workers == 1 or len(keys) < 2:
            into.update((key, read(key)) for key in keys)
            return
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            into.update(zip(keys, pool.map(read, keys), strict=True))

    def prefetch(self, enquiries: list[Enquiry]) -> None:
        """Read every identity, then every linked visitor's touches, the enquiries need."""
        hashes = sorted({e.email_hash for e in enquiries} - self._members.keys())
        self._fetch(hashes, self.store.identity_visitors, self._members)
        visitors = {v for e in enquiries for v in self._visitors(e)}
        self._fetch(sorted(visitors - self._touches.keys()), self.store.touches, self._touches)

    def _visitors(self, enquiry: Enquiry) -> list[str]:
        members = self._members.get(enquiry.email_hash)
        if members is None:
            members = self._members[enquiry.email_hash] = self.store.identity_visitors(
                enquiry.email_hash
            )
        return sorted({enquiry.visitor_id, *members})

    def touches_of(self, enquiry: Enquiry) -> Iterator[Touch]:
        for visitor_id in self._visitors(enquiry):
            touches = self._touches.get(visitor_id)
            if touches is None:
                touches = self._touches[visitor_id] = self.store.touches(visitor_id)
            yield from touches


def generate(store: ReportStore, query: ReportQuery, *, workers: int = 1) -> Report:
    """Compute the report for ``query`` from the rows as they are now."""
    first, last = query.start.isoformat(), query.end.isoformat()
    enquiries = [
        enquiry
        for month in months_between(query.start, query.end)
        for enquiry in store.enquiries(month)
        if first <= enquiry.at[:10] <= last
    ]
    enquiries.sort(key=lambda e: (e.at, e.enquiry_id))
    reader = PathReader(store, workers)
    reader.prefetch(enquiries)
    return attribute(
        enquiries,
        reader.touches_of,
        start=query.start,
        end=query.end,
        mode=query.mode,
        include_asked=query.include_asked,
    )


@dataclass(frozen=True)
class Rendered:
    """A rendered report body and when it stops being fresh (monotonic seconds)."""

    body: str
    content_type: str
    filename: str
    expires: float


def render(report: Report, query: ReportQuery, generated_at: str) -> tuple[str, str, str]:
    """(body, content type, file name) of a report in the asked format."""
    stem = f"lead-sources-{query.start}-{query.end}-{query.mode}"
    if query.format == "csv":
        return report.to_csv(), "text/csv; charset=utf-8", f"{stem}.csv"
    document = {**report.to_json(), "generated_at": generated_at}
    return json.dumps(document, separators=(",", ":")), "application/json; charset=utf-8", (
        f"{stem}.json"
    )


class ReportCache:
    """A small LRU of rendered reports, each fresh for ``ttl_seconds``."""

    def __init__(self, ttl_seconds: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._entries: OrderedDict[ReportQuery, Rendered] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, query: ReportQuery) -> Rendered | None:
        with self._lock:
            entry = self._entries.get(query)
            if entry is None or entry.expires <= self._clock():
                self._entries.pop(query, None)
                return None
            self._entries.move_to_end(query)
            return entry

    def put(self, query: ReportQuery, body: str, content_type: str, filename: str) -> Rendered:
        entry = Rendered(body, content_type, filename, self._clock() + self.ttl_seconds)
        if self.ttl_seconds > 0:
            with self._lock:
                self._entries[query] = entry
                self._entries.move_to_end(query)
                while len(self._entries) > CACHE_ENTRIES:
                    self._entries.popitem(last=False)
        return entry

    def remaining(self, entry: Rendered) -> int:
        return max(0, int(entry.expires - self._clock()))


@dataclass
class ReportApp:
    """The report endpoint with its collaborators (store, cache, clock) swappable."""

    store: ReportStore
    cache_seconds: int
    clock: Clock = utc_now
    workers: int = 1
    cache: ReportCache = field(init=False)

    def __post_init__(self) -> None:
        self.cache = ReportCache(self.cache_seconds)

    def __call__(self, request: Request) -> dict[str, Any]:
        if request.method not in ("GET", "HEAD"):
            return json_error(405, "method_not_allowed", "reports are read with GET")
        try:
            query = parse_query(request.query, self.clock().date())
        except RequestError as err:
            return err.response()
        entry = self.cache.get(query)
        hit = entry is not None
        if entry is None:
            report = generate(self.store, query, workers=self.workers)
            entry = self.cache.put(query, *render(report, query, iso(self.clock())))
            get_logger().info("report generated", extra={"enquiries": report.enquiries})
        max_age = self.cache.remaining(entry) if self.cache_seconds else 0
        return {
            "statusCode": 200,
            "headers": {
                "content-type": entry.content_type,
                "cache-control": f"private, max-age={max_age}" if max_age else "no-store",
                "content-disposition": f'inline; filename="{entry.filename}"',
                "x-content-type-options": "nosniff",
                "x-report-cache": "hit" if hit else "miss",
            },
            "body": entry.body,
            "isBase64Encoded": False,
        }


def app(settings: ReportSettings, clock: Clock) -> ReportApp:
    """The app of the function's settings."""
    return ReportApp(
        store=DynamoStore(
            touches_table=settings.touches_table,
            identities_table=settings.identities_table,
            enquiries_table=settings.enquiries_table,
        ),
        cache_seconds=settings.report_cache_seconds,
        workers=QUERY_WORKERS,
        clock=clock,
    )
