"""dm-block's HubSpot read at scale: the real client against a local stand-in of HubSpot.

Run with ``make bench-dm-read`` or ``.venv/bin/python benchmarks/bench_hubspot_read.py
[--quick] [--latency 0.25] [--sizes 100000] [--continuation 1000000]``. Every figure printed
comes from this run.

The stand-in (127.0.0.1 only) serves ``GET /crm/objects/<version>/contacts`` with 100 contacts a
page and ``paging.next.after``, as HubSpot does, from contacts made by the seeded CRM generator (testsupport/crm_generator.py). It
enforces HubSpot's documented limits for the chosen tier (a rolling 10-second burst window and a
daily count; "API usage guidelines and limits",
https://developers.hubspot.com/docs/developer-tooling/platform/usage-guidelines) by answering
429 with HubSpot's body and ``Retry-After``. The client is the production one
(``handlers.duplicate_merger.crm.HubSpotCrm`` over ``handlers.common.hubspot``), limiter and
retries included, making real HTTP requests.

Time is simulated, so the run takes seconds: a virtual clock is the real elapsed time plus every
simulated page latency (the stand-in adds it instead of sleeping; requests are sequential, so
this is exact) plus every wait of the client's limiter and retries (they advance the clock
instead of sleeping). HubSpot publishes no latency figure: ``--latency`` is the assumed time to
serve one page of 100 contacts (default 0.25 s, +-20 % seeded jitter).

Two questions:

1. **One invocation** (100k contacts by default): does the whole read fit in dm-block's 300 s,
   and does reading plus blocking (``block_reserve``) fit in one invocation?
2. **Beyond it** (1M by default): the checkpointed read (``handlers.duplicate_merger.reading``,
   with the real chunk encoding, an in-memory stand-in for the pairs table) over as many 300 s
   invocations as it needs; invocations, simulated wall time, chunk sizes.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from handlers.common.api_versions import HUBSPOT_DEFAULT_VERSION  # noqa: E402
from handlers.common.hubspot import TIERS, RateLimit  # noqa: E402
from handlers.duplicate_merger import reading  # noqa: E402
from handlers.duplicate_merger.crm import HubSpotCrm  # noqa: E402
from testsupport.crm_generator import generate  # noqa: E402
from testsupport.dm import MemoryCheckpoints  # noqa: E402

INVOCATION_S = 300.0
POOL = 100_000


class VirtualClock:
    """Real elapsed time plus simulated latency and waits."""

    def __init__(self) -> None:
        self._start = time.perf_counter()
        self._offset = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return time.perf_counter() - self._start + self._offset

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._offset += max(0.0, seconds)


@dataclass
class Counters:
    requests: int = 0
    throttled: int = 0


class Portal:
    """The stand-in's data: ``size`` contacts, ids 1..size, properties from a generated pool."""

    def __init__(self, size: int, seed: int) -> None:
        self.size = size
        pool = generate(min(size, POOL), seed=seed, duplicate_rate=0.1).contacts
        self.pool = [props for _, props in pool]

    def page(self, start: int, limit: int) -> bytes:
        end = min(self.size, start + limit)
        results = [
            {
                "id": str(i + 1),
                "properties": {**self.pool[i % len(self.pool)], "hs_object_id": str(i + 1)},
                "createdAt": "2025-01-01T00:00:00Z",
                "updatedAt": "2025-01-01T00:00:00Z",
                "archived": False,
            }
            for i in range(start, end)
        ]
        body: dict[str, Any] = {"results": results}
        if end < self.size:
            body["paging"] = {"next": {"after": str(end), "link": f"?after={end}"}}
        return json.dumps(body).encode()


def serve(portal: Portal, clock: VirtualClock, limits: RateLimit, latency: float, seed: int, counters: Counters) -> ThreadingHTTPServer:
    window: deque[float] = deque()
    rng = random.Random(seed)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if parts.path != f"/crm/objects/{HUBSPOT_DEFAULT_VERSION}/contacts" or not self.headers.get(
                "authorization", ""
            ).startswith("Bearer "):
                self._send(404, b'{"status":"error","message":"not found"}')
                return
            with lock:
                now = clock.now()
                counters.requests += 1
                while window and window[0] <= now - limits.window_s:
                    window.popleft()
                if counters.requests > limits.daily:
                    counters.throttled += 1
                    body = {"status": "error", "errorType": "RATE_LIMIT", "policyName": "DAILY",
                            "message": "You have reached your daily limit."}
                    self._send(429, json.dumps(body).encode(), {"Retry-After": "3600"})
                    return
                if len(window) >= limits.burst:
                    counters.throttled += 1
                    wait = window[0] + limits.window_s - now
                    body = {"status": "error", "errorType": "RATE_LIMIT", "policyName": "SECONDLY",
                            "message": "You have reached your secondly limit."}
                    self._send(429, json.dumps(body).encode(), {"Retry-After": str(max(1, round(wait + 0.5)))})
                    return
                window.append(now)
                clock.advance(latency * rng.uniform(0.8, 1.2))
            start = int(query.get("after") or 0)
            self._send(200, portal.page(start, int(query.get("limit") or 100)))

        def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def _crm(url: str, clock: VirtualClock, limits: RateLimit, deadline: float | None = None) -> HubSpotCrm:
    return HubSpotCrm(
        "bench-service-key",
        url,
        limits=limits,
        clock=clock.now,
        sleep=clock.advance,
        deadline=deadline,
        wall=clock.now,
    )


def one_invocation(size: int, latency: float, tier: str, client_limiter: bool, seed: int) -> dict[str, Any]:
    clock = VirtualClock()
    counters = Counters()
    server_limits = TIERS[tier]
    httpd = serve(Portal(size, seed), clock, server_limits, latency, seed, counters)
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    limits = server_limits if client_limiter else RateLimit(burst=10**9, daily=10**9)
    crm = _crm(url, clock, limits)
    real = time.perf_counter()
    start = clock.now()
    count = sum(1 for _ in crm.iter_contacts())
    elapsed = clock.now() - start
    httpd.shutdown()
    httpd.server_close()
    return {
        "contacts": count,
        "latency": latency,
        "tier": tier,
        "limiter": client_limiter,
        "requests": counters.requests,
        "throttled": counters.throttled,
        "retries": crm.client.retries,
        "waited": crm.client.waited_s,
        "read_s": elapsed,
        "real_s": time.perf_counter() - real,
        "fits_read": elapsed <= INVOCATION_S - reading.SAVE_RESERVE_S,
        "fits_read_and_block": elapsed <= INVOCATION_S - reading.block_reserve(count),
    }


def continuation(size: int, latency: float, tier: str, seed: int) -> dict[str, Any]:
    clock = VirtualClock()
    counters = Counters()
    httpd = serve(Portal(size, seed), clock, TIERS[tier], latency, seed, counters)
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    store = MemoryCheckpoints()
    real = time.perf_counter()
    begin = clock.now()
    step, invocations, outcome = 0, 0, None
    retries = 0
    durations: list[float] = []
    while True:
        invocations += 1
        started = clock.now()
        crm = _crm(url, clock, TIERS[tier], deadline=started + INVOCATION_S - reading.SAVE_RESERVE_S / 2)
        def remaining(begun: float = started) -> float:
            return INVOCATION_S - (clock.now() - begun)

        outcome = reading.read_step(crm, store, "bench", step, remaining)
        retries += crm.client.retries
        used = clock.now() - started
        durations.append(used)
        if used > INVOCATION_S:
            raise SystemExit(f"invocation {invocations} ran {used:.0f} s, over {INVOCATION_S:.0f} s")
        if outcome.action != "continue":
            break
        step = outcome.state.step
    httpd.shutdown()
    httpd.server_close()
    sizes = [len(c) for c in store.data.values()]
    ids = [cid for cid, _ in outcome.contacts]  # yielded once, chunk by chunk
    return {
        "contacts": len(ids),
        "distinct": len(set(ids)),
        "latency": latency,
        "tier": tier,
        "invocations": invocations,
        "requests": counters.requests,
        "throttled": counters.throttled,
        "retries": retries,
        "wall_s": clock.now() - begin,
        "real_s": time.perf_counter() - real,
        "longest_s": max(durations),
        "last_s": durations[-1],
        "chunks": len(sizes),
        "max_chunk_kb": max(sizes, default=0) / 1024,
        "stored_mb": sum(sizes) / 1024 / 1024,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one latency, 250k continuation")
    parser.add_argument("--latency", type=float, default=0.25, help="seconds per page of 100")
    parser.add_argument("--sizes", default="100000", help="portal sizes read in one invocation")
    parser.add_argument("--continuation", type=int, default=1_000_000, help="portal size read over invocations")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-single", action="store_true", help="only the continuation")
    options = parser.parse_args(argv)
    sizes = [int(s) for s in options.sizes.split(",") if s]
    latencies = [options.latency] if options.quick else sorted({0.05, 0.1, options.latency, 0.5})
    print(f"HubSpot {HUBSPOT_DEFAULT_VERSION}, dm-block invocation {INVOCATION_S:.0f} s, "
          f"save reserve {reading.SAVE_RESERVE_S:.0f} s, block reserve {reading.BLOCK_BASE_S:.0f} s "
          f"+ {reading.BLOCK_S_PER_CONTACT * 1e6:.0f} s per million contacts")
    print()
    print("One invocation: the whole read through the client (limiter on unless noted)")
    print("| contacts | s/page | tier (burst/10 s) | requests | 429s | retries | limiter+retry wait s | read s | fits 300 s | read+block in one | real s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    runs = [(size, lat, tier, True) for size in sizes for lat in latencies for tier in ("starter", "professional")]
    runs.append((sizes[0], 0.05, "starter", False))
    if options.no_single:
        runs = []
    for size, lat, tier, limiter in runs:
        r = one_invocation(size, lat, tier, limiter, options.seed)
        label = f"{tier} ({TIERS[tier].burst})" + ("" if limiter else ", client limiter off")
        print(f"| {r['contacts']:,} | {lat:.2f} | {label} | {r['requests']:,} | {r['throttled']} | "
              f"{r['retries']} | {r['waited']:.1f} | {r['read_s']:.1f} | {'yes' if r['fits_read'] else 'NO'} | "
              f"{'yes' if r['fits_read_and_block'] else 'no: blocks in a 2nd'} | {r['real_s']:.1f} |")
    size = 250_000 if options.quick else options.continuation
    print()
    print("Beyond one invocation: the checkpointed read (reading.read_step)")
    print("| contacts | s/page | tier | invocations | longest s | last s (loads every chunk) | requests | 429s | simulated wall min | chunks | largest chunk KB | stored MB | each contact once | real s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for lat in [options.latency]:
        c = continuation(size, lat, "starter", options.seed)
        once = c["contacts"] == c["distinct"] == size
        print(f"| {c['contacts']:,} | {lat:.2f} | starter | {c['invocations']} | {c['longest_s']:.0f} | {c['last_s']:.1f} | "
              f"{c['requests']:,} | {c['throttled']} | "
              f"{c['wall_s'] / 60:.1f} | {c['chunks']} | {c['max_chunk_kb']:.0f} | {c['stored_mb']:.1f} | "
              f"{'yes' if once else 'NO'} | {c['real_s']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
