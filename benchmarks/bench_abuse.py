"""Every public Function URL under forged and valid-looking requests: what one request costs.

    make bench-abuse                                   # N = 10 and 100 (a few minutes)
    .venv/bin/python benchmarks/bench_abuse.py --small 5 --large 20

The dev stack runs in the sandbox (moto server, local Function URLs, every AWS call in the
interceptor's ledger) and every enabled system plays its scripted day, which leaves the mails
and SMS carrying signed links. Then, for each public surface (each ``NONE``-auth Function URL
in the graph: a new one is included, and the run fails until it knows how to call it), N
forged requests (a cut link, a wrong secret or signature, a foreign origin) and N
valid-looking ones (a link from the day's messages reused, or a correctly signed request
with new content), for two N. After each batch the pump delivers everything it caused, and
the table gives per request what the functions did (``sandbox.meter``: DynamoDB reads and
writes, S3 operations, secret reads, model calls, provider calls, messages sent, other AWS
calls, downstream invocations) before the clock moves: work the stack defers, such as upsr's
nudge two hours later or rrs's ask at its hour, shows as the job queued or the schedule made.

Exit status 1 when a surface's cost per request grows with N (the large batch costs more per
request than the small one), or a forged request wrote, sent, or called a model or provider.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.offline.program import program_graph  # noqa: E402
from sandbox import scenarios  # noqa: E402
from sandbox.core import HttpAnswer, Sandbox  # noqa: E402
from sandbox.meter import Cost, Meter  # noqa: E402
from sandbox.play import enabled_systems, play  # noqa: E402
from sandbox.scenarios import ler, ls, rrs, upsr  # noqa: E402

BROWSER = {
    "accept": "text/html,application/xhtml+xml,*/*;q=0.8",
    "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
}
GROWTH = 0.10
"""How much more a request of the large batch may cost than one of the small (noise)."""
SLACK = 0.05
"""Per request, in any count: a one-off call (a cold start's secret read) spread over N."""

Send = Callable[[Sandbox, int], HttpAnswer]


@dataclass(frozen=True)
class Kit:
    """How to send one forged and one valid-looking request (``i`` makes each one new)."""

    forged: Send
    valid: Send
    how: str
    before: Callable[[Sandbox], None] = lambda sb: None
    """What the stack's schedules would have done by now (the day moved the clock past them)."""


# Surfaces the day's messages link to: the link reused, and cut --------------------------------


def links_to(sb: Sandbox, seed: str) -> list[str]:
    """The links in the day's mails and SMS that open ``seed``'s Function URL."""
    base = re.escape(sb.url(seed).rstrip("/"))
    found: list[str] = []
    for message in sb.outbox.messages:
        for text in (message.text, message.html):
            found += re.findall(base + r"/[^\s\"'<>)]*", text.replace("&amp;", "&"))
    return found


def link_kit(seed: str, link: str) -> Kit:
    parts = urlsplit(link)
    path = f"{parts.path}?{parts.query}" if parts.query else parts.path

    def valid(sb: Sandbox, i: int) -> HttpAnswer:
        return sb.http(seed, "GET", path, headers=BROWSER)

    def forged(sb: Sandbox, i: int) -> HttpAnswer:
        return sb.http(seed, "GET", path[:-5], headers=BROWSER)

    return Kit(forged, valid, "the day's link reused / the link cut short")


# Surfaces that take requests: how the outside world signs them --------------------------------


def _ler_intake(secret_ok: bool) -> Send:
    def send(sb: Sandbox, i: int) -> HttpAnswer:
        lead = {
            "email": f"buyer{i}@company{i}.co.uk",
            "name": f"Pat Buyer {i}",
            "company": f"Company {i} Ltd",
            "message": "Could you send me a quote for 20 units?",
        }
        secret = ler.INTAKE_SECRET if secret_ok else "not-the-secret"
        return sb.http(
            "ler-intake", "POST", "/", body=json.dumps(lead),
            headers={"content-type": "application/json", "x-ler-intake-secret": secret},
        )

    return send


def _ls_capture(origin_ok: bool) -> Send:
    def send(sb: Sandbox, i: int) -> HttpAnswer:
        # The costliest beacon, an enquiry; one address from ever new visitors, so the identity
        # it stitches grows with every request.
        beacon = {"kind": "enquiry", "url": f"{ls.SITE}/contact", "email": "flood@example.org",
                  "heard_about": "", "submission_id": f"form-{i:05d}-bench"}
        origin = ls.SITE if origin_ok else "https://evil.example.net"
        return sb.http(
            "ls-capture", "POST", "/", body=json.dumps(beacon),
            headers={"origin": origin, "user-agent": ls.BROWSER,
                     "content-type": "text/plain;charset=UTF-8"},
        )

    return send


def _upsr_order(secret_ok: bool) -> Send:
    def send(sb: Sandbox, i: int) -> HttpAnswer:
        order = upsr._order(900_000 + i, sb.clock.now() - dt.timedelta(minutes=1))
        # A new customer each time: a customer with an open offer is not offered again.
        order["customer"] = {**order["customer"], "id": 800_000 + i,
                             "email": f"camper{i}@example.org", "phone": f"+4477009{i:05d}"}
        order["email"] = order["customer"]["email"]
        secret = upsr.WEBHOOK_SECRET if secret_ok else "not-the-secret"
        return upsr.shopify_webhook(sb, "upsr-order", "orders/create", order, f"wh-bench-{i}", secret)

    return send


def _upsr_compliance(secret_ok: bool) -> Send:
    def send(sb: Sandbox, i: int) -> HttpAnswer:
        # Shopify's customers/redact for a customer the shop never sent: the erasure still
        # searches upsr's tables, which is what a flood of signed requests would cost.
        payload = {"shop_id": 1, "shop_domain": upsr.SHOP,
                   "customer": {"id": 700_000 + i, "email": f"gone{i}@example.org",
                                "phone": f"+4477008{i:05d}"},
                   "orders_to_redact": [600_000 + i]}
        secret = upsr.WEBHOOK_SECRET if secret_ok else "not-the-secret"
        return upsr.shopify_webhook(
            sb, "upsr-compliance", "customers/redact", payload, f"wh-redact-bench-{i}", secret
        )

    return send


def _rrs_webhook(secret_ok: bool) -> Send:
    def send(sb: Sandbox, i: int) -> HttpAnswer:
        # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
        from handlers.common.webhook_signatures import sign_timestamped

        done = sb.clock.now() - dt.timedelta(minutes=30)
        event = {
            "type": "job.completed", "id": f"evt-bench-{i}", "completion_id": f"cmp-bench-{i}",
            "customer_id": "c-ann", "completed_at": done.isoformat().replace("+00:00", "Z"),
            "job": {"id": f"job-bench-{i}", "title": "Boiler service"},
            "signal": {"rating": 5, "notes": "All good", "complaint": False},
        }
        body = json.dumps(event).encode()
        secret = rrs.WEBHOOK_SECRET if secret_ok else "wrong-secret"
        signature = sign_timestamped(body, secret, int(sb.clock.now().timestamp()))
        return sb.http(
            "rrs-webhook", "POST", "/", body=body,
            headers={"content-type": "application/json", "x-rrs-signature": signature},
        )

    return send


def _fresh_catalogue(sb: Sandbox) -> None:
    """The 15-minute catalogue sync, run now: the picker offers nothing from a stale one."""
    sb.fire("upsr-catalog-sync")
    sb.drain()


REQUESTS: dict[str, Callable[[], Kit]] = {
    "ler-intake": lambda: Kit(_ler_intake(False), _ler_intake(True),
                              "a new lead with the form's secret / a wrong secret"),
    "ls-capture": lambda: Kit(_ls_capture(False), _ls_capture(True),
                              "a new visitor's enquiry, one address / from a foreign origin"),
    "upsr-order": lambda: Kit(_upsr_order(False), _upsr_order(True),
                              "a new customer's order, signed / signed with a wrong secret",
                              _fresh_catalogue),
    "upsr-compliance": lambda: Kit(_upsr_compliance(False), _upsr_compliance(True),
                                   "Shopify's customers/redact, signed / signed with a wrong secret"),
    "rrs-webhook": lambda: Kit(_rrs_webhook(False), _rrs_webhook(True),
                               "a new completion, signed / signed with a wrong secret"),
}
"""Surfaces that take requests rather than links, by function name without the prefix."""


def public_surfaces(sb: Sandbox) -> list[str]:
    """Every function with a ``NONE``-auth Function URL, from the graph."""
    return sorted(
        spec.name.removeprefix(f"{sb.prefix}-")
        for spec in sb.topology.functions.values()
        if spec.url_auth == "NONE"
    )


def kit_for(sb: Sandbox, seed: str) -> Kit | None:
    if seed in REQUESTS:
        return REQUESTS[seed]()
    links = links_to(sb, seed)
    return link_kit(seed, links[-1]) if links else None


# Measuring -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    surface: str
    kind: str
    n: int
    statuses: str
    cost: Cost


def batch(sb: Sandbox, meter: Meter, seed: str, kind: str, send: Send, n: int, first: int) -> Row:
    mark = meter.mark()
    statuses: dict[int, int] = {}
    for i in range(first, first + n):
        status = send(sb, i).status
        statuses[status] = statuses.get(status, 0) + 1
    sb.drain()  # what the requests caused: queues, streams, events
    shown = " ".join(f"{s}x{c}" for s, c in sorted(statuses.items()))
    return Row(seed, kind, n, shown, meter.since(mark).per(n))


def grows(small: Cost, large: Cost) -> list[str]:
    return [
        f"{name} {a:.2f} -> {b:.2f}"
        for (name, a), (_, b) in zip(small.items(), large.items(), strict=True)
        if b > a * (1 + GROWTH) + SLACK
    ]


FORGED_MUST_NOT = ("writes", "s3", "model", "provider", "sent", "other", "invoked")
"""What a refused request may not cause (it may read its secret and, for a link, its record)."""


def spent(forged: Cost) -> list[str]:
    return [f"{name} {value:.2f}" for name, value in forged.items()
            if name in FORGED_MUST_NOT and value > 0]


def table(rows: list[Row]) -> str:
    names = [name for name, _ in Cost().items()]
    head = f"{'surface':<16} {'kind':<6} {'N':>4}  {'answers':<16}" + "".join(
        f"{n:>9}" for n in names
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.surface:<16} {r.kind:<6} {r.n:>4}  {r.statuses:<16}"
            + "".join(f"{v:>9.2f}" for _, v in r.cost.items())
        )
    return "\n".join(lines)


def run(small: int, large: int) -> tuple[list[Row], list[str]]:
    graph = program_graph("dev")
    with Sandbox(graph) as sb:
        results = play(sb, [k for k in scenarios.ORDER if k in enabled_systems(graph)],
                       out=io.StringIO())
        broken = [r.key for r in results if r.crashed or not all(c.ok for c in r.checks)]
        if broken:
            raise SystemExit(f"bench-abuse: the scripted day did not end as it should: {broken}")
        meter = Meter(sb)
        for key in enabled_systems(graph):
            scenario = scenarios.load(key)
            for held in vars(scenario).values() if scenario is not None else ():
                if held is not None and not isinstance(held, str | int | float | dict | list):
                    meter.watch(held)  # the CRM, enrichment and store stand-ins
        rows: list[Row] = []
        problems: list[str] = []
        counter = 0
        for seed in public_surfaces(sb):
            kit = kit_for(sb, seed)
            if kit is None:
                problems.append(f"{seed}: no way to call it (no link to it in the day's "
                                "messages, no entry in REQUESTS)")
                continue
            print(f"  {seed}: {kit.how}", flush=True)
            kit.before(sb)
            for kind, send in (("forged", kit.forged), ("valid", kit.valid)):
                measured = []
                for n in (small, large):
                    measured.append(batch(sb, meter, seed, kind, send, n, counter))
                    counter += n
                rows += measured
                growth = grows(measured[0].cost, measured[1].cost)
                if growth:
                    problems.append(f"{seed} {kind}: per request cost grows with N: "
                                    + ", ".join(growth))
                cost = [spent(m.cost) for m in measured] if kind == "forged" else []
                if any(cost):
                    problems.append(f"{seed} forged: a refused request cost "
                                    + ", ".join(cost[0] or cost[1]))
        return rows, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--small", type=int, default=10)
    parser.add_argument("--large", type=int, default=100)
    args = parser.parse_args()
    print(f"bench-abuse: every public Function URL, N = {args.small} and {args.large} "
          "forged and valid-looking requests; counts per request", flush=True)
    rows, problems = run(args.small, args.large)
    print(table(rows))
    print("reads/writes: DynamoDB; secrets: Parameter Store or Secrets Manager reads; model: "
          "Bedrock; provider: CRM, enrichment, store calls; sent: SES, SMS, SNS; other: any "
          "other AWS call; invoked: Lambda invocations caused downstream")
    for problem in problems:
        print(f"FAIL {problem}")
    if problems:
        raise SystemExit(1)
    print("ok: no surface costs more per request as N grows; forged requests write nothing")


if __name__ == "__main__":
    main()
