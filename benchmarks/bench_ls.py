"""Lead source attributor: capture throughput and report time, printed as figures.

    make bench-ls                      # full run (about a minute or two on 2 cores)
    .venv/bin/python benchmarks/bench_ls.py --quick

Capture: the ls-capture handler called in-process with realistic beacons (a mix of tagged,
referred, direct and internal-navigation arrivals), once over moto's DynamoDB (every touch a
conditional PutItem through boto3) and once over the in-memory store (the function's own CPU
cost: parsing, origin and bot checks, normalisation, response). Report: ``generate`` over the
in-memory store for 10k, 100k and 1M touches (10 touches per visitor over 90 days, 10% of
visitors enquire, a fifth of those from a second device too), strict and lenient, plus 10k
over moto to show the DynamoDB adapter's overhead. Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from handlers.common.aws_clients import client, reset_clients, table
from handlers.common.observability import get_logger

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from handlers.common.function_url import Request  # noqa: E402
from handlers.source_attributor.beacon import MAX_BODY_BYTES  # noqa: E402
from handlers.source_attributor.capturing import CaptureApp  # noqa: E402
from handlers.source_attributor.records import Enquiry, Touch, iso  # noqa: E402
from handlers.source_attributor.reporting import (  # noqa: E402
    QUERY_WORKERS,
    PathReader,
    ReportQuery,
    generate,
    months_between,
    render,
)
from handlers.source_attributor.sources import HowDetected, Medium, classify  # noqa: E402
from handlers.source_attributor.store import DynamoStore, ReportStore  # noqa: E402
from testsupport.ls import InMemoryStore  # noqa: E402

ORIGIN = "https://www.example.com"
SITE = frozenset({ORIGIN})
TTL_DAYS = 548
UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15"
START = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
ARRIVALS = [
    (f"{ORIGIN}/?utm_source=Google&utm_medium=cpc&utm_campaign=spring", "https://www.google.com/"),
    (f"{ORIGIN}/pricing", "https://www.google.co.uk/"),
    (f"{ORIGIN}/?utm_source=fb&utm_medium=paid_social", ""),
    (f"{ORIGIN}/blog/post", "https://l.facebook.com/l.php?u=x"),
    (f"{ORIGIN}/?utm_source=newsletter&utm_medium=email&utm_campaign=june", ""),
    (f"{ORIGIN}/", ""),
    (f"{ORIGIN}/about", "https://someblog.example.org/review"),
    (f"{ORIGIN}/contact", f"{ORIGIN}/pricing"),
]
SOURCES: list[tuple[str, Medium, HowDetected]] = [
    ("google", "organic", "referrer"), ("google", "cpc", "utm"), ("facebook", "organic", "referrer"),
    ("facebook", "cpc", "utm"), ("newsletter", "referral", "utm"), ("direct", "direct", "none"),
    ("direct", "direct", "none"), ("bing", "organic", "referrer"), ("podcast_x", "referral", "utm"),
]


def beacons(n: int, seed: int = 1) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    for i in range(n):
        url, referrer = ARRIVALS[rng.randrange(len(ARRIVALS))]
        body = {"kind": "arrival", "url": url, "referrer": referrer,
                "visitor_id": f"visitor-{i % 5000:016d}"}
        yield {
            "headers": {"origin": ORIGIN, "user-agent": UA, "content-type": "text/plain"},
            "requestContext": {"requestId": str(i), "http": {"method": "POST"}},
            "body": json.dumps(body),
            "isBase64Encoded": False,
        }


class Ticker:
    """A clock that moves one millisecond per call, so every touch has its own key."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> dt.datetime:
        self.now += dt.timedelta(milliseconds=1)
        return self.now


def rate(label: str, count: int, seconds: float, unit: str) -> None:
    print(f"  {label:<58} {count / seconds:>12,.0f} {unit}/s   ({count:,} in {seconds:.2f} s)")


@contextmanager
def moto_env() -> Iterator[None]:
    for name, value in {
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled", "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
    }.items():
        os.environ[name] = value
    # moto loads slowly: only on this path
    from moto import mock_aws


    reset_clients()
    with mock_aws():
        for name, pk, sk in (("bench-touches", "visitor_id", "at"),
                             ("bench-identities", "identity_key", "visitor_id"),
                             ("bench-enquiries", "month", "enquiry_id")):
            client("dynamodb").create_table(
                TableName=name,
                KeySchema=[{"AttributeName": pk, "KeyType": "HASH"},
                           {"AttributeName": sk, "KeyType": "RANGE"}],
                AttributeDefinitions=[{"AttributeName": pk, "AttributeType": "S"},
                                      {"AttributeName": sk, "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )
        yield
    reset_clients()


def capture_figures(n_moto: int, n_memory: int) -> None:
    print("capture (ls-capture handler, in-process, one touch per arrival beacon)")
    urls = list(ARRIVALS)
    t0 = time.perf_counter()
    loops = n_memory
    for i in range(loops):
        classify(*urls[i % len(urls)], SITE)
    rate("classify() alone (the normalisation table)", loops, time.perf_counter() - t0, "calls")

    def run(app: CaptureApp, n: int) -> tuple[int, float]:
        events = list(beacons(n))
        written = 0
        t = time.perf_counter()
        for event in events:
            response = app(Request.read(event, max_bytes=MAX_BODY_BYTES))  # as the entry reads it
            written += json.loads(response["body"]).get("recorded", False) is True
        return written, time.perf_counter() - t

    memory = InMemoryStore()
    app = CaptureApp(memory, SITE, lambda: b"k" * 32, TTL_DAYS, clock=Ticker())
    written, seconds = run(app, n_memory)
    rate(f"handler over the in-memory store ({written:,} touches written)", n_memory, seconds,
         "beacons")
    rate("  of which touches written", written, seconds, "touches")
    with moto_env():
        app = CaptureApp(DynamoStore(touches_table="bench-touches",
                                     enquiries_table="bench-enquiries"),
                         SITE, lambda: b"k" * 32, TTL_DAYS, clock=Ticker())
        written, seconds = run(app, n_moto)
        rate(f"handler over moto DynamoDB ({written:,} conditional PutItems)", n_moto, seconds,
             "beacons")
        rate("  of which touches written", written, seconds, "touches")


def dataset(touches: int, enquiry_share: float, seed: int = 7) -> tuple[InMemoryStore, int]:
    """``touches`` touches, 10 per visitor over 90 days; ``enquiry_share`` of visitors enquire,
    a fifth of those also linked to a second device."""
    rng = random.Random(seed)
    store = InMemoryStore()
    visitors = max(1, touches // 10)
    enquiries = 0
    for v in range(visitors):
        vid = f"visitor-{v:016d}"
        days = sorted(rng.uniform(0, 90) for _ in range(10))
        for day in days:
            source, medium, how = SOURCES[rng.randrange(len(SOURCES))]
            store.put_touch(Touch(vid, iso(START + dt.timedelta(days=day)), source, medium,
                                  "", "", "/", how, 0))
        if rng.random() < enquiry_share:
            person = f"{v:064x}"
            when = iso(START + dt.timedelta(days=days[-1] + 0.01))
            store.put_enquiry(Enquiry(when[:7], f"e{v}", when, vid, person, "", "/contact"), None)
            store.link(person, vid, "email", when, f"e{v}")
            enquiries += 1
            if rng.random() < 0.2 and v > 0:
                other = f"visitor-{rng.randrange(v):016d}"
                store.link(person, other, "cookie", when, f"e{v}")
    return store, enquiries


QUERY_RANGE = (START.date(), (START + dt.timedelta(days=91)).date())


def queries_needed(store: InMemoryStore, query: ReportQuery) -> tuple[int, int]:
    """(Queries a report issues against DynamoDB, touches it walks) for this data."""
    months = len(months_between(*QUERY_RANGE))
    enquiries = [e for m in store.enquiry_rows.values() for e in m.values()]
    reader = PathReader(store)
    reader.prefetch(enquiries)
    walked = sum(len(reader._touches[v]) for v in reader._touches)
    return months + reader.queries, walked


def timed_report(store: ReportStore, query: ReportQuery, workers: int = 1) -> float:
    t = time.perf_counter()
    report = generate(store, query, workers=workers)
    render(report, query, "now")
    return time.perf_counter() - t


def report_figures(sizes: list[int], moto_size: int) -> None:
    print("report (generate + render over a 3-month range; in-memory store = CPU cost only)")
    query = {mode: ReportQuery(*QUERY_RANGE, mode, False, "json")
             for mode in ("strict", "lenient")}
    for share, label in ((0.10, "10% of visitors enquire"), (1.0, "every visitor enquires")):
        print(f"  {label}:")
        for size in sizes:
            t = time.perf_counter()
            store, enquiries = dataset(size, share)
            built = time.perf_counter() - t
            times = {mode: timed_report(store, q) for mode, q in query.items()}
            reads, walked = queries_needed(store, query["strict"])
            print(f"    {size:>9,} touches, {enquiries:>7,} enquiries: strict "
                  f"{times['strict'] * 1000:>8,.0f} ms, lenient {times['lenient'] * 1000:>8,.0f} ms"
                  f"   ({walked:,} touches walked, {reads:,} DynamoDB Queries; "
                  f"data built in {built:.1f} s)")
    if moto_size:
        store, enquiries = dataset(moto_size, 0.10)
        with moto_env():
            dynamo = DynamoStore("bench-touches", "bench-identities", "bench-enquiries")
            t = time.perf_counter()
            with table("bench-touches").batch_writer() as batch:
                for rows in store.touch_rows.values():
                    for touch in rows.values():
                        batch.put_item(Item=touch.item())
            with table("bench-enquiries").batch_writer() as batch:
                for month in store.enquiry_rows.values():
                    for enquiry in month.values():
                        batch.put_item(Item=enquiry.item())
            with table("bench-identities").batch_writer() as batch:
                for identities in store.identity_table.values():
                    for row in identities.values():
                        batch.put_item(Item=row.item())
            loaded = time.perf_counter() - t
            reads, _ = queries_needed(store, query["strict"])
            for workers in (1, QUERY_WORKERS):
                seconds = timed_report(dynamo, query["strict"], workers)
                print(f"  {moto_size:>9,} touches, {enquiries:>7,} enquiries, strict, over moto "
                      f"DynamoDB, {workers:>2} reader thread(s): {seconds * 1000:,.0f} ms "
                      f"({reads:,} Queries; data loaded in {loaded:.1f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    options = parser.parse_args(argv)
    get_logger().setLevel("WARNING")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    if options.quick:
        capture_figures(n_moto=300, n_memory=3000)
        report_figures([10_000], moto_size=2_000)
    else:
        capture_figures(n_moto=3000, n_memory=50_000)
        report_figures([10_000, 100_000, 1_000_000], moto_size=10_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())

