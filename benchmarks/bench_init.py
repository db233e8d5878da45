"""Cold-start budget: archive size and handler import time for every function.

For each function the dev stack declares (the program run on the mock engine, so these are the
archives ``pulumi up`` would upload), and for any handler module under handlers/<system>/ that
no enabled system deploys yet, this unpacks the archive into a fresh directory and times ``import`` of the handler module in a new interpreter (``-I -S``) whose path is only the
unpacked archive plus a "runtime" directory holding what Lambda and the Powertools layer provide
(boto3 & co.; aws_lambda_powertools, pydantic & co.). That is the part of INIT the code controls.
Compiled distributions ship as their python3.14 arm64 wheel, which this machine cannot load, so
for timing only they are swapped for this environment's build of the same locked version.

Then the **first invocation** of each function, which is what a Shopify webhook or a
reviewer's click waits for on a cold container: the sandbox (sandbox/, moto and local stand-ins)
plays ``make demo``; the first time a function is invoked there, the same event is first given
to a fresh interpreter (``-I -S``, the runtime directory's bytecode precompiled as Lambda's
runtime ships it, under a PYTHONPYCACHEPREFIX; path = the unpacked archive + the runtime directory, the
function's declared environment, AWS calls to the sandbox's moto server) that imports the
handler (``import ms``) and calls it once (``first call ms``: sessions, clients, botocore model
loading, secrets, the first AWS and outside calls). Bedrock ``Converse``, End User Messaging
``SendTextMessage``, SES ``SendEmail`` and Lambda ``Invoke``/``GetFunctionUrlConfig`` go to a
local HTTP stand-in (the sandbox's model answers; sent messages join the sandbox's outbox); outside HTTPS APIs (HubSpot, PDL/Apollo, Shopify, a sheet URL)
get a canned answer in the child (an empty portal, an unknown company, a token and no
products, an empty sheet). The sandbox then runs its own invocation as usual, which for an
exactly-once handler is a redelivery. The child reads the sandbox's clock (real time plus
the offset the scenario moved it by), so a signed event the scenario dated is checked at the
time it was signed for; the ``outcome`` column says what the first call answered. One run per
function, and on a Function URL one per kind of request (method, path, JSON ``type``): any kind
can meet a cold environment (a first delivery happens once). Wall and CPU time are both
printed, and a predicted first invocation at the function's configured memory
(components/offline/cold_start.py): the CPU time scaled by 1,769 / memory (Lambda gives CPU in
proportion to memory), plus each AWS call the request made, recorded by a before-call hook on
the child's boto3 sessions, at its in-region latency, plus one new connection per client, plus
any outside HTTPS call (components/offline/latencies.yaml: sources and assumptions). The
waits measured here are moto's on this machine, not Lambda's, so they are printed, not used.
A public surface's (an auth-NONE Function URL's) prediction is set against the 1.5 s target
and Shopify's 5 s. ``--record`` keeps each function's import CPU in
components/offline/cold_starts.yaml, the INIT phase ``make cost`` bills.

Two columns: ``src ms`` imports the archive as built here (sources only when no Python 3.14 is
available; ``-B`` so nothing is cached, as on Lambda's read-only /var/task), and ``pyc ms``
imports the same tree after compiling it with this interpreter (checked-hash pycs), which is
what shipping bytecode buys. Figures are from this machine and Python, not from arm64 Lambda:
compare rows and runs, not absolute values with Lambda's INIT duration.

Usage: .venv/bin/python benchmarks/bench_init.py [--runs 7] [--budget-ms 1000] [--strict]
       [--only TEXT] [--no-first-call] [--json FILE]

Functions are found from the dev stack's graph (each function's ``handler`` and archive), so
the script runs on any layout the archive builder supports (``components/archive.py``).
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import uuid
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import PathDistribution
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from components.archive import (  # noqa: E402
    HandlerRef,
    build_function_archive,
    compile_bytecode,
    discover_handlers,
    distributions_for,
    function_name_for,
    handler_imports,
    stage_runtime_packages,
    vendored_distribution,
)
from components.offline import cold_start  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "archive_system"
REFERENCE_IMPORTS = {
    "runtime: boto3": "import boto3",
    "runtime: boto3 + dynamodb resource": (
        "import boto3; boto3.session.Session().resource('dynamodb', region_name='eu-west-2')"
    ),
    "layer: powertools Logger": "from aws_lambda_powertools.logging import Logger",
    "layer: pydantic BaseModel": "from pydantic import BaseModel",
}


@dataclass(frozen=True)
class Row:
    """One function's figures."""

    function: str
    handler: str
    vendored: tuple[str, ...]
    kib: float
    files: int
    src_ms: float
    pyc_ms: float


WEBHOOK_BUDGET_MS = 5000
"""Shopify drops a webhook delivery not answered within 5 s."""


@dataclass(frozen=True)
class FirstCall:
    """One function's cold first invocation, measured in a fresh interpreter."""

    function: str
    import_ms: float
    call_ms: float
    outcome: str
    source: str
    """What delivered the event in the sandbox (url, sqs, schedule, rule, s3...)."""
    import_cpu_ms: float = 0.0
    call_cpu_ms: float = 0.0
    """CPU time of import and of the call (this process only; waits excluded)."""
    memory_mb: int = 0
    calls: tuple[cold_start.Call, ...] = ()
    """The AWS calls the first request made, as recorded."""
    outside: tuple[str, ...] = ()
    """The outside HTTPS hosts it called."""
    public: bool = False
    """An auth-NONE Function URL's function."""
    request: str = ""
    """A Function URL request's kind (``POST /r job.completed``): each kind is a first
    invocation of its own, since any of them can meet a cold environment."""

    @property
    def total_ms(self) -> float:
        return self.import_ms + self.call_ms

    @property
    def cpu_ms(self) -> float:
        return self.import_cpu_ms + self.call_cpu_ms

    def prediction(self, latencies: cold_start.Latencies) -> cold_start.Prediction:
        """At its configured memory, with the waits of the calls it made."""
        return cold_start.predict(
            self.cpu_ms, self.memory_mb or cold_start.FULL_VCPU_MB, self.calls,
            len(self.outside), latencies,
        )


def time_code(code: str, paths: list[Path], runs: int) -> float:
    """Median seconds of ``code`` (timed in-process) over ``runs`` fresh interpreters."""
    prelude = f"import sys, time\nsys.path[:0] = {[str(p) for p in paths]!r}\nstart = time.perf_counter()\n"
    tail = "\nprint(time.perf_counter() - start)\n"
    env = {"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "eu-west-2", "AWS_REGION": "eu-west-2"}
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-B", "-c", prelude + code + tail],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"import failed:\n{done.stderr.strip()}")
        samples.append(float(done.stdout.strip().splitlines()[-1]))
    return statistics.median(samples)


def fixture_source_root(scratch: Path) -> Path:
    """A source tree with the real handlers/common and the archive test's fixture system."""
    root = scratch / "fixture-src"
    ignore = shutil.ignore_patterns("__pycache__")
    (root / "handlers").mkdir(parents=True)
    shutil.copy(REPO / "handlers" / "__init__.py", root / "handlers" / "__init__.py")
    shutil.copytree(REPO / "handlers" / "common", root / "handlers" / "common", ignore=ignore)
    shutil.copytree(FIXTURE, root / "handlers" / "archive_system", ignore=ignore)
    return root


def deployed_functions() -> list[tuple[str, str, Path, str]]:
    """(document name, handler, archive, physical name) of every function the dev stack declares.

    The program is run on the mock engine, so the archives measured are the ones ``pulumi up``
    would upload, built with the vendored packages each function declares.
    """
    # the mock engine loads Pulumi and the program (seconds): only on this path
    from components.offline.engine import run

    graph = run("dev")
    found = []
    for fn in graph.of_type("aws:lambda/function:Function"):
        archive = Path(fn.inputs["code"]["archive"])
        found.append(
            (fn.inputs["tags"]["crm:function"], fn.inputs["handler"], archive, fn.inputs["name"])
        )
    return sorted(found)


def swap_in_host_builds(tree: Path) -> list[str]:
    """Replace the archive's compiled distributions by this environment's build of them.

    The archive holds the python3.14 arm64 wheel (components/wheels.py), which this machine
    cannot load; the same locked version built for this machine is put in its place so the
    import can be timed. Size and file counts are taken from the archive before the swap.
    """
    swapped = []
    for info in sorted(tree.glob("*.dist-info")):
        wheel = info / "WHEEL"
        if not wheel.is_file() or "Root-Is-Purelib: false" not in wheel.read_text():
            continue
        name = PathDistribution(info).metadata["Name"]
        host = vendored_distribution(name, native="host")
        for top in host.modules:
            shutil.rmtree(tree / top, ignore_errors=True)
            for loose in tree.glob(f"{top}.*"):
                loose.unlink()
        for arcname, path in host.files:
            target = tree / arcname
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        swapped.append(name)
    return swapped


def unpack(name: str, path: Path, scratch: Path) -> tuple[Path, int, tuple[str, ...]]:
    """The archive unpacked (compiled distributions swapped for this machine's build), its
    file count and vendored top-level packages."""
    work = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=scratch))
    with zipfile.ZipFile(path) as zipped:
        files = len(zipped.namelist())
        zipped.extractall(work / "src")
        vendored = tuple(
            sorted(
                top
                for top in {n.split("/")[0] for n in zipped.namelist() if "/" in n}
                if top != "handlers" and not top.endswith(".dist-info")
            )
        )
    swap_in_host_builds(work / "src")
    return work / "src", files, vendored


def measure_archive(
    name: str, handler: str, path: Path, scratch: Path, runtime: Path, runs: int
) -> Row:
    """Unpack one built archive and time a clean import of its handler."""
    ref = HandlerRef.parse(handler)
    tree, files, vendored = unpack(name, path, scratch)
    code = f"import importlib\ngetattr(importlib.import_module({ref.module!r}), {ref.attribute!r})"
    src_ms = time_code(code, [tree, runtime], runs) * 1000
    compiled = tree.parent / "pyc"
    shutil.copytree(tree, compiled)
    compile_bytecode(compiled, sys.executable)
    pyc_ms = time_code(code, [compiled, runtime], runs) * 1000
    return Row(name, handler, vendored, path.stat().st_size / 1024, files, src_ms, pyc_ms)


def measure(
    handler: str, root: Path | None, scratch: Path, runtime: Path, runs: int, label: str
) -> Row:
    """Build, unpack and time one discovered handler (no stack declares it)."""
    vendored = distributions_for(handler_imports(handler, source_root=root))
    name = function_name_for(handler)
    path = build_function_archive(
        name, handler, vendored, source_root=root, out_dir=scratch / "archives"
    )
    row = measure_archive(name, handler, path, scratch, runtime, runs)
    return Row(label + row.function, *list(row.__dict__.values())[1:])


# First invocation --------------------------------------------------------------------------

# Run in the fresh interpreter: the stand-in for outside HTTPS APIs is installed before the
# clock starts (it needs only the standard library), then the handler is imported and called.
CHILD = r"""
import json, sys, time
spec = json.loads(open(sys.argv[1]).read())
sys.path[:0] = spec["paths"]
import email.message, io, urllib.error, urllib.parse, urllib.request

_local_open = urllib.request.urlopen
_HUBSPOT_EMPTY = {"results": [], "total": 0, "paging": {}, "status": "COMPLETE"}
_SHOPIFY_PAGE = {
    "data": {"products": {"edges": [], "nodes": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}},
    "extensions": {"cost": {"requestedQueryCost": 1, "actualQueryCost": 1, "throttleStatus": {
        "maximumAvailable": 2000.0, "currentlyAvailable": 1999, "restoreRate": 100.0}}},
}


class _Answer:
    def __init__(self, url, status, body, kind):
        self.url, self.status, self.code, self.reason = url, status, status, "OK"
        self.headers = email.message.Message()
        self.headers["Content-Type"] = kind
        self._body = io.BytesIO(body)
    def read(self, *args):
        return self._body.read(*args)
    def getcode(self):
        return self.status
    def info(self):
        return self.headers
    def geturl(self):
        return self.url
    def close(self):
        pass
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False


def _canned(url, method):
    parts = urllib.parse.urlsplit(url)
    host, path = parts.hostname or "", parts.path
    if host == "api.hubapi.com":  # an empty portal
        if method == "POST" and not ("search" in path or "/batch/" in path):
            return 201, {"id": "9001", "properties": {}}
        if method in ("PUT", "DELETE"):
            return 204, None
        return 200, _HUBSPOT_EMPTY
    if host.endswith("peopledatalabs.com"):  # an unknown company (no charge for a miss)
        return 404, {"status": 404, "error": {"type": "not_found", "message": "No records were found"}}
    if host.endswith("apollo.io"):
        return 200, {}
    if host.endswith("myshopify.com") or "shopify" in host:
        if path.endswith("/oauth/access_token"):
            return 200, {"access_token": "shpat_standin", "scope": "read_products", "expires_in": 86399}
        return 200, _SHOPIFY_PAGE
    return 200, "customer_id,name,email,phone\n"  # a sheet with no rows


_outside = []


def _urlopen(request, data=None, timeout=None, **kwargs):
    url = request.full_url if hasattr(request, "full_url") else str(request)
    if urllib.parse.urlsplit(url).hostname in ("127.0.0.1", "localhost"):
        return _local_open(request, data, timeout) if timeout else _local_open(request, data)
    _outside.append(urllib.parse.urlsplit(url).hostname)
    method = request.get_method() if hasattr(request, "get_method") else ("POST" if data else "GET")
    status, body = _canned(url, method)
    if isinstance(body, str):
        raw, kind = body.encode(), "text/csv"
    else:
        raw, kind = (b"" if body is None else json.dumps(body).encode()), "application/json"
    if status >= 400:
        headers = email.message.Message()
        headers["Content-Type"] = kind
        raise urllib.error.HTTPError(url, status, "stand-in", headers, io.BytesIO(raw))
    return _Answer(url, status, raw, kind)


urllib.request.urlopen = _urlopen


class Context:
    def __init__(self, spec):
        self.function_name = spec["name"]
        self.memory_limit_in_mb = spec["memory_mb"]
        self.invoked_function_arn = spec["arn"]
        self.aws_request_id = "bench-init-first-call"
        self.log_group_name = "/aws/lambda/" + spec["name"]
        self.log_stream_name = "bench/[$LATEST]0"
        self.function_version = "$LATEST"
        self._deadline = time.monotonic() + spec["timeout_s"]
    def get_remaining_time_in_millis(self):
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _outcome(result):
    if isinstance(result, dict) and "statusCode" in result:
        body = " ".join(str(result.get("body") or "").split())
        return "HTTP %s %s" % (result["statusCode"], body[:60])
    if isinstance(result, dict) and "batchItemFailures" in result:
        failed = len(result["batchItemFailures"])
        return "batch ok" if not failed else "%d item(s) failed" % failed
    return "returned " + type(result).__name__


import importlib

started, started_cpu = time.perf_counter(), time.process_time()
module_name, _, attribute = spec["handler"].rpartition(".")
handler = getattr(importlib.import_module(module_name), attribute)
imported, imported_cpu = time.perf_counter(), time.process_time()
# The demo's time, not the real one: a signed event (rrs's webhook) was dated by the sandbox,
# whose clock a scenario moves; the handler reads the one clock of handlers.common.entry.
if spec.get("clock_offset_s"):
    import datetime as _dt
    _offset = _dt.timedelta(seconds=spec["clock_offset_s"])
    sys.modules["handlers.common.entry"].registry.override(
        clock=lambda: _dt.datetime.now(_dt.UTC) + _offset
    )
    imported, imported_cpu = time.perf_counter(), time.process_time()
# Record every AWS call of the first request: a before-call hook on each boto3 session the
# one client factory (handlers.common.aws_clients) makes; its clients copy the session's hooks.
_calls = []
_clients = sys.modules.get("handlers.common.aws_clients")
_make_session = getattr(_clients, "_session", None)


def _recorded_session(region):
    session = _make_session(region)
    if not getattr(session, "_bench_recorded", False):
        def _record(model, request_signer=None, **kwargs):
            _calls.append([model.service_model.service_name, model.name, id(request_signer)])
        session.events.register("before-call", _record)
        session._bench_recorded = True
    return session


if _make_session is not None:
    _clients._session = _recorded_session
imported, imported_cpu = time.perf_counter(), time.process_time()
if spec.get("profile"):
    import cProfile
    _profiler = cProfile.Profile(time.process_time)
    _profiler.enable()
try:
    outcome = _outcome(handler(spec["event"], Context(spec)))
except Exception as err:
    outcome = "raised %s: %s" % (type(err).__name__, " ".join(str(err).split())[:90])
called, called_cpu = time.perf_counter(), time.process_time()
if spec.get("profile"):
    _profiler.disable()
    _profiler.dump_stats(spec["profile"])
with open(spec["out"], "w") as out:
    json.dump(
        {
            "import_s": imported - started,
            "call_s": called - imported,
            "import_cpu_s": imported_cpu - started_cpu,
            "call_cpu_s": called_cpu - imported_cpu,
            "outcome": outcome,
            "calls": _calls,
            "outside": _outside,
        },
        out,
    )
"""


def _ses_v1_params(form: Mapping[str, list[str]]) -> dict[str, Any]:
    """SES v1 ``SendEmail`` query parameters in the shape the sandbox's outbox reads."""
    def one(key: str) -> str:
        return form.get(key, [""])[0]

    to = [v[0] for k, v in sorted(form.items()) if k.startswith("Destination.ToAddresses.member.")]
    body = {kind: {"Data": one(f"Message.Body.{kind}.Data")} for kind in ("Text", "Html")}
    return {
        "Source": one("Source"),
        "Destination": {"ToAddresses": to},
        "Message": {"Subject": {"Data": one("Message.Subject.Data")}, "Body": body},
    }


class LocalServices:
    """Bedrock Converse, SMS, SES and Lambda for the child, over HTTP on 127.0.0.1.

    Converse is answered by the sandbox's model stand-in (the scenario's answers, else a value
    valid against the forced tool's schema); SendTextMessage and SES SendEmail (v2 and v1) are
    accepted and put in the sandbox's outbox, as the sandbox's own invocations are, so the
    scenario goes on (a nudge's link is tapped); Lambda ``Invoke`` is acknowledged (the target
    is not run: the sandbox's own invocation does that) and ``GetFunctionUrlConfig`` names the
    function's local URL.
    """

    def __init__(
        self,
        model: Callable[..., Any],
        urls: Mapping[str, str],
        sent: Callable[[Any, Mapping[str, Any]], None],
    ) -> None:
        # the CLI loads each command's modules when it runs (``--help`` stays quick)
        from sandbox.interceptor import CallRecord

        self.model, self.urls = model, urls
        self.function: str | None = None
        self.region = ""

        def record(service: str, operation: str, params: dict[str, Any]) -> None:
            sent(CallRecord(self.function, service, operation, self.region, params), params)

        services = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def _answer(self, status: int, body: Any) -> None:
                raw = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
                target = self.headers.get("X-Amz-Target", "")
                if path.startswith("/model/") and path.endswith("/converse"):
                    params = json.loads(raw or b"{}")
                    params["modelId"] = path.removeprefix("/model/").removesuffix("/converse")
                    self._answer(200, services.model("bedrock", "Converse", params, services.function))
                elif target.endswith(".SendTextMessage"):
                    record("sms-voice", "SendTextMessage", json.loads(raw or b"{}"))
                    self._answer(200, {"MessageId": str(uuid.uuid4())})
                elif path == "/v2/email/outbound-emails":
                    record("ses", "SendEmail", json.loads(raw or b"{}"))
                    self._answer(200, {"MessageId": str(uuid.uuid4())})
                elif b"Action=SendEmail" in raw:
                    form = urllib.parse.parse_qs(raw.decode())
                    record("ses", "SendEmail", _ses_v1_params(form))
                    xml = (
                        '<SendEmailResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/">'
                        f"<SendEmailResult><MessageId>{uuid.uuid4()}</MessageId></SendEmailResult>"
                        "<ResponseMetadata><RequestId>bench</RequestId></ResponseMetadata>"
                        "</SendEmailResponse>"
                    ).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/xml")
                    self.send_header("Content-Length", str(len(xml)))
                    self.end_headers()
                    self.wfile.write(xml)
                elif path.startswith("/2015-03-31/functions/") and path.endswith("/invocations"):
                    asynchronous = self.headers.get("X-Amz-Invocation-Type") == "Event"
                    self._answer(202 if asynchronous else 200, None if asynchronous else {})
                else:
                    self._answer(400, {"message": f"bench-init stand-in: no answer for {path} {target}"})

            def do_GET(self) -> None:
                path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
                if path.startswith("/2021-10-31/functions/") and path.endswith("/url"):
                    name = path.split("/")[3].rsplit(":", 1)[-1]
                    url = services.urls.get(name, f"https://{name}.lambda-url.invalid/")
                    self._answer(200, {"FunctionUrl": url, "FunctionArn": name, "AuthType": "NONE"})
                else:
                    self._answer(400, {"message": f"bench-init stand-in: no answer for {path}"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def environment(self) -> dict[str, str]:
        """Service-specific endpoints (botocore reads ``AWS_ENDPOINT_URL_<SERVICE ID>``)."""
        return {
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": self.endpoint,
            "AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2": self.endpoint,
            "AWS_ENDPOINT_URL_LAMBDA": self.endpoint,
            "AWS_ENDPOINT_URL_SESV2": self.endpoint,
            "AWS_ENDPOINT_URL_SES": self.endpoint,
        }

    def close(self) -> None:
        self.server.shutdown()


def precompile(paths: list[Path], prefix: Path) -> None:
    """Bytecode for what Lambda's runtime and layer ship compiled (boto3, Powertools...), kept
    under ``prefix`` (PYTHONPYCACHEPREFIX) so the installed packages are left as they are."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-j", "0", *map(str, paths)],
        env={"PATH": "/usr/bin:/bin", "PYTHONPYCACHEPREFIX": str(prefix)},
        capture_output=True,
        check=False,
        timeout=900,
    )


def first_call(
    spec: Any,
    event: Any,
    env: Mapping[str, str],
    paths: list[Path],
    scratch: Path,
    clock_offset_s: float = 0.0,
    profile: Path | None = None,
) -> dict[str, Any]:
    """Import and call ``spec``'s handler once on ``event`` in a fresh interpreter whose
    clock runs ``clock_offset_s`` ahead of real time (the sandbox's clock): ``FirstCall``'s
    measured fields."""
    job = scratch / f"{spec.name}-first-call.json"
    out = scratch / f"{spec.name}-first-call.out.json"
    job.write_text(
        json.dumps(
            {
                "paths": [str(p) for p in paths],
                "handler": spec.handler,
                "event": event,
                "name": spec.name,
                "arn": spec.arn,
                "memory_mb": spec.memory_mb,
                "timeout_s": spec.timeout_s,
                "clock_offset_s": clock_offset_s,
                "out": str(out),
                "profile": str(profile) if profile else None,
            },
            default=str,
        )
    )
    # No -B: the runtime's bytecode (precompiled under the prefix) is read as Lambda reads
    # its own; the archive's sources are compiled on this first import, as on Lambda.
    pyc = {"PYTHONPYCACHEPREFIX": str(scratch / "pycache")}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", CHILD, str(job)],
        capture_output=True,
        text=True,
        env={k: v for k, v in {**env, **pyc}.items() if k != "PYTHONDONTWRITEBYTECODE"},
        timeout=spec.timeout_s + 120,
        check=False,
    )
    if done.returncode != 0 or not out.is_file():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"import_ms": 0.0, "call_ms": 0.0, "outcome": f"child failed: {last[:100]}"}
    found = json.loads(out.read_text())
    return {
        "import_ms": found["import_s"] * 1000,
        "call_ms": found["call_s"] * 1000,
        "import_cpu_ms": found["import_cpu_s"] * 1000,
        "call_cpu_ms": found["call_cpu_s"] * 1000,
        "outcome": str(found["outcome"]),
        "calls": tuple(cold_start.Call(*c) for c in found["calls"]),
        "outside": tuple(found["outside"]),
    }


def request_kind(event: Mapping[str, Any]) -> str:
    """``POST /path type``: a Function URL request's method, path and JSON body ``type``."""
    http = (event.get("requestContext") or {}).get("http") or {}
    # A link's token is not a kind: a segment that is not a short word becomes ``*``.
    path = "/".join(
        s if not s or (s.isalpha() and len(s) <= 20) else "*"
        for s in str(event.get("rawPath") or "/").split("/")
    )
    kind = f"{http.get('method', '?')} {path or '/'}"
    body = event.get("body") or ""
    try:
        raw = base64.b64decode(body) if event.get("isBase64Encoded") else body
        typed = json.loads(raw).get("type") if raw else None
    except (ValueError, AttributeError):
        typed = None
    return f"{kind} {typed}" if isinstance(typed, str) else kind


def first_invocations(
    archives: Mapping[str, Path], scratch: Path, runtime: Path, only: str,
    profile: str = "",
) -> tuple[list[FirstCall], list[str]]:
    """Play ``make demo``; time each function's first event in a fresh interpreter first.

    ``archives`` maps physical function names to their built archives. Returns the figures
    and the functions the demo never invoked.
    """
    # the mock engine loads Pulumi and the program (seconds): only on this path
    from components.offline.program import program_graph

    # the CLI loads each command's modules when it runs (``--help`` stays quick)
    from sandbox import scenarios
    from sandbox.core import Sandbox
    from sandbox.play import play

    graph = program_graph("dev")
    names = {
        fn.inputs["name"]: fn.inputs["tags"]["crm:function"]
        for fn in graph.of_type("aws:lambda/function:Function")
    }
    # The public surfaces: functions behind a Function URL anyone may call (auth NONE).
    public = {
        str(url.inputs.get("functionName"))
        for url in graph.of_type("aws:lambda/functionUrl:FunctionUrl")
        if url.inputs.get("authorizationType") == "NONE"
    }
    found: dict[tuple[str, str], FirstCall] = {}
    trees: dict[str, Path] = {}
    precompile([runtime], scratch / "pycache")
    with Sandbox(graph) as sb:
        assert sb.runtime is not None
        rt = sb.runtime
        services = LocalServices(
            sb.model, {n: s.url for n, s in sb.urls.items()}, sb.outbox.observe
        )
        original = rt.invoke

        def invoke(function: str, event: Any, *, source: str) -> Any:
            spec = rt.topology.functions[function]
            wanted = spec.name in archives and only in names.get(spec.name, spec.name)
            kind = request_kind(event) if source == "url" else ""
            if wanted and (spec.name, kind) not in found:
                if spec.name not in trees:
                    trees[spec.name] = unpack(spec.name, archives[spec.name], scratch)[0]
                env = {**rt.environment(spec), **services.environment()}
                services.function, services.region = spec.name, spec.region
                offset = (sb.clock.now() - dt.datetime.now(dt.UTC)).total_seconds()
                profiled = None
                if profile and profile == names.get(spec.name) and not any(
                    name == spec.name for name, _ in found
                ):
                    profiled = REPO / "build" / f"{profile}.first-call.prof"
                    profiled.parent.mkdir(parents=True, exist_ok=True)
                measured = first_call(
                    spec, event, env, [trees[spec.name], runtime], scratch, offset, profiled
                )
                if profiled is not None:
                    pstats.Stats(str(profiled)).sort_stats("cumulative").print_stats(40)
                    measured["outcome"] += " (profiled: call CPU inflated)"
                found[spec.name, kind] = FirstCall(
                    names.get(spec.name, spec.name),
                    source=source,
                    memory_mb=int(spec.memory_mb),
                    public=spec.name in public or spec.arn in public,
                    request=kind,
                    **measured,
                )
                # The child's AWS calls bypass the sandbox's interceptor, which tells the pump
                # what to poll: have it look at every kind of source once.
                if sb.triggers is not None:
                    sb.triggers.dirty.update({"queues", "streams", "buckets", "bus", "schedules"})
            return original(function, event, source=source)

        rt.invoke = invoke  # type: ignore[method-assign]
        try:
            enabled = graph.config.systems.enabled()
            play(sb, [k for k in scenarios.ORDER if k in enabled], out=io.StringIO())
        finally:
            rt.invoke = original  # type: ignore[method-assign]
            services.close()
    seen = {name for name, _ in found}
    missing = sorted(names[n] for n in archives if n not in seen and only in names.get(n, n))
    return sorted(found.values(), key=lambda r: (r.function, r.request)), missing


def table(headers: list[str], rows: list[list[str]], right: set[int]) -> str:
    """Rows as an aligned plain-text table."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    lines = []
    for row in [headers, ["-" * w for w in widths], *rows]:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=7, help="fresh interpreters per figure (median)"
    )
    parser.add_argument(
        "--budget-ms", type=float, default=1000.0, help="import budget per function"
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when a function is over budget"
    )
    parser.add_argument("--only", default="", help="only handlers containing this text")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument(
        "--no-first-call",
        dest="first_call",
        action="store_false",
        help="skip the first-invocation figures (they play make demo)",
    )
    parser.add_argument(
        "--profile",
        default="",
        metavar="FUNCTION",
        help="profile FUNCTION's first call (CPU time): printed, kept in build/FUNCTION.first-call.prof",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="write each function's import CPU to components/offline/cold_starts.yaml (make cost)",
    )
    args = parser.parse_args()

    handlers = [h for h in discover_handlers() if args.only in h]
    rows: list[Row] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-init-") as scratch_dir:
        scratch = Path(scratch_dir)
        runtime = stage_runtime_packages(scratch / "runtime")
        deployed = [f for f in deployed_functions() if args.only in f[1] or args.only in f[0]]
        for name, handler, archive, _ in deployed:
            try:
                rows.append(measure_archive(name, handler, archive, scratch, runtime, args.runs))
            except Exception as err:  # one broken function must not hide the others' figures
                failures.append(f"{name}: {err}")
        covered = {handler for _, handler, _, _ in deployed}
        targets: list[tuple[str, Path | None, str]] = [
            (h, None, "(not deployed) ") for h in handlers if h not in covered
        ]
        if not targets and not deployed and args.only:
            print(f"no handler matches --only {args.only!r}", file=sys.stderr)
            return 1
        if not targets and not deployed:
            print("no system handlers under handlers/ yet: measuring the archive test fixture\n")
            targets = [
                (
                    "handlers.archive_system.hello.handler",
                    fixture_source_root(scratch),
                    "(fixture) ",
                )
            ]
        for handler, root, label in targets:
            try:
                rows.append(measure(handler, root, scratch, runtime, args.runs, label))
            except Exception as err:  # one broken function must not hide the others' figures
                failures.append(f"{handler}: {err}")
        reference = {
            name: time_code(code, [runtime], args.runs) * 1000
            for name, code in REFERENCE_IMPORTS.items()
        }
        firsts: list[FirstCall] = []
        never: list[str] = []
        predicted: dict[tuple[str, str], cold_start.Prediction] = {}
        if args.first_call and deployed:
            archives = {physical: archive for _, _, archive, physical in deployed}
            firsts, never = first_invocations(
                archives, scratch, runtime, args.only, args.profile
            )

    print(
        table(
            ["function", "handler", "vendored", "KiB", "files", "src ms", "pyc ms", "budget"],
            [
                [
                    r.function,
                    r.handler,
                    ",".join(r.vendored) or "-",
                    f"{r.kib:.0f}",
                    str(r.files),
                    f"{r.src_ms:.1f}",
                    f"{r.pyc_ms:.1f}",
                    "ok" if r.src_ms <= args.budget_ms else "OVER",
                ]
                for r in rows
            ],
            right={3, 4, 5, 6},
        )
    )
    print(
        f"\nmedian of {args.runs} fresh interpreters, {sys.implementation.name} {sys.version.split()[0]}"
    )
    print(f"budget: {args.budget_ms:.0f} ms per handler import (src ms)\n")
    print(
        table(
            ["reference import", "ms"], [[k, f"{v:.1f}"] for k, v in reference.items()], right={1}
        )
    )
    if firsts:
        latencies = cold_start.load_latencies()
        print(
            "\nfirst invocation (fresh interpreter, archive + runtime dir, the event the"
            " function first got in make demo, AWS on moto, model/SMS/outside APIs stand-ins):\n"
        )

        def verdict(f: FirstCall, p: cold_start.Prediction) -> str:
            if not f.public or not f.request:  # a queue or schedule: nobody waits on it
                return "-"
            if p.total_ms > WEBHOOK_BUDGET_MS:
                return "OVER 5 s"
            return "OVER 1.5 s" if p.over_target else "ok"

        predicted.update({(f.function, f.request): f.prediction(latencies) for f in firsts})
        print(
            table(
                [
                    "function", "MB", "import ms", "call ms", "import cpu", "call cpu",
                    "cpu@MB", "calls", "aws wait", "conns", "outside", "predicted ms",
                    "public", "event", "outcome",
                ],
                [
                    [
                        f.function,
                        str(f.memory_mb),
                        f"{f.import_ms:.0f}",
                        f"{f.call_ms:.0f}",
                        f"{f.import_cpu_ms:.0f}",
                        f"{f.call_cpu_ms:.0f}",
                        f"{p.cpu_ms:.0f}",
                        str(p.calls),
                        f"{p.aws_ms:.0f}",
                        f"{p.connect_ms:.0f}",
                        f"{p.outside_ms:.0f}",
                        f"{p.total_ms:.0f}",
                        verdict(f, p),
                        f"url {f.request}" if f.request else f.source,
                        f.outcome[:50],
                    ]
                    for f in firsts
                    for p in [predicted[f.function, f.request]]
                ],
                right=set(range(1, 12)),
            )
        )
        print(
            "\none run per function (per request kind on a Function URL): a first delivery"
            " happens once. import/call ms: wall time"
            " here; cpu@MB = (import cpu + call cpu) x 1769 MB / memory (at most one vCPU);"
            " aws wait = each recorded AWS call at its latency, conns = one new connection per"
            " client and outside call, outside = outside HTTPS calls"
            " (components/offline/latencies.yaml); predicted = cpu@MB + aws wait + conns +"
            f" outside. public (auth-NONE Function URL): against the"
            f" {cold_start.PUBLIC_TARGET_MS / 1000:g} s target and Shopify's"
            f" {WEBHOOK_BUDGET_MS / 1000:g} s\n"
        )
        for f in firsts:
            if f.public:
                unknown = {
                    f"{c.service}.{c.operation}" for c in f.calls
                    if not latencies.known(c.service, c.operation)
                }
                marks = f" (? no latency: {', '.join(sorted(unknown))})" if unknown else ""
                outside = f"; outside: {', '.join(f.outside)}" if f.outside else ""
                print(f"{f.function} [{f.request or f.source}]: {cold_start.summary(f.calls)}{outside}{marks}")
        worst: dict[str, cold_start.Prediction] = {}
        for f in firsts:
            p = predicted[f.function, f.request]
            slower = f.function not in worst or p.total_ms > worst[f.function].total_ms
            if f.public and f.request and slower:
                worst[f.function] = p
        print("\npublic surfaces, slowest first request kind predicted:")
        for name, p in sorted(worst.items()):
            mark = "OVER 1.5 s" if p.over_target else "ok"
            print(f"  {name:<16} {p.total_ms:6.0f} ms  {mark}")
        if args.record:
            figures: dict[str, float] = {}
            for f in firsts:  # a function's first request (by kind) imported it first
                if f.import_cpu_ms > 0:
                    figures.setdefault(f.function, f.import_cpu_ms)
            note = (
                f"{dt.date.today().isoformat()}, {sys.implementation.name}"
                f" {sys.version.split()[0]} on {sys.platform}, one fresh interpreter per function"
                " (the archive's sources compiled on import, as on Lambda), load average"
                f" {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (CPU time grows with load)"
            )
            cold_start.write_cold_starts(figures, note)
            print(f"\nimport CPU of {len(figures)} functions written to {cold_start.COLD_STARTS.relative_to(REPO)}")
    for function in never:
        print(f"first invocation: {function} was not invoked by make demo (no figure)")
    for failure in failures:
        print(f"\nFAILED {failure}", file=sys.stderr)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "runs": args.runs,
                    "functions": [r.__dict__ for r in rows],
                    "reference_ms": reference,
                    "first_invocations": [
                        {
                            **f.__dict__,
                            "calls": [c.__dict__ for c in f.calls],
                            "total_ms": f.total_ms,
                            "predicted": {
                                **predicted[f.function, f.request].__dict__,
                                "total_ms": predicted[f.function, f.request].total_ms,
                            },
                        }
                        for f in firsts
                    ],
                    "not_invoked_by_demo": never,
                },
                indent=2,
            )
        )
    over = [r for r in rows if r.src_ms > args.budget_ms]
    return 1 if failures or (args.strict and over) else 0


if __name__ == "__main__":
    sys.exit(main())
