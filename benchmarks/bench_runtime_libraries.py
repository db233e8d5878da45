"""Our secrets cache and Function URL helpers beside the Powertools layer's own (issue 31).

Prints, for ``handlers/common/secrets.py`` vs Powertools Parameters (``get_secret``) and
``handlers/common/function_url.py`` vs Powertools Event Handler
(``LambdaFunctionUrlResolver``, ``LambdaFunctionUrlEvent``):

- import time: median of fresh interpreters importing the module (what a cold start pays
  before the handler runs; the layer's modules are on disk in Lambda as here);
- lines: non-blank, non-comment lines of our module (what we maintain);
- behaviour on the cases our public handlers depend on, run against both.

Run: ``.venv/bin/python benchmarks/bench_runtime_libraries.py`` (no network; moto for Secrets
Manager).
"""

from __future__ import annotations

import base64
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import boto3
from aws_lambda_powertools.event_handler import LambdaFunctionUrlResolver
from aws_lambda_powertools.utilities import parameters
from aws_lambda_powertools.utilities.data_classes import LambdaFunctionUrlEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from handlers.common import function_url as ours
from handlers.common.secrets import DEFAULT_TTL_SECONDS, SecretCache

ROOT = Path(__file__).resolve().parents[1]
RUNS = 9

IMPORTS = {
    "ours: handlers.common.secrets": "import handlers.common.secrets",
    "ours + boto3 (the first fetch imports it)": "import handlers.common.secrets, boto3",
    "Powertools: parameters.get_secret": (
        "from aws_lambda_powertools.utilities.parameters import get_secret"
    ),
    "ours: handlers.common.function_url": "import handlers.common.function_url",
    "Powertools: event_handler.LambdaFunctionUrlResolver": (
        "from aws_lambda_powertools.event_handler import LambdaFunctionUrlResolver"
    ),
}


def import_ms(statement: str) -> float:
    """Median wall time of ``statement`` in a fresh interpreter, interpreter start excluded."""
    code = (
        "import time; t = time.perf_counter(); "
        f"{statement}; print((time.perf_counter() - t) * 1000)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    times = []
    for _ in range(RUNS):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        times.append(float(out.stdout.strip()))
    return statistics.median(times)


def code_lines(path: Path) -> int:
    lines = [line.strip() for line in path.read_text().splitlines()]
    return sum(1 for line in lines if line and not line.startswith("#"))


def url_event(body: bytes, *, path: str = "/hook") -> dict[str, Any]:
    return {
        "version": "2.0",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"content-type": "application/json"},
        "requestContext": {
            "http": {"method": "POST", "path": path, "sourceIp": "192.0.2.1"},
            "requestId": "r1",
            "stage": "$default",
        },
        "body": base64.b64encode(body).decode(),
        "isBase64Encoded": True,
    }


def outcome(call: Any) -> str:
    try:
        return repr(call())[:60]
    except Exception as err:
        return f"raises {type(err).__name__}"


def function_url_behaviour() -> list[tuple[str, str, str]]:

    rows = []
    binary = url_event(b"\xff\xfe{}")
    rows.append(
        (
            "non-UTF-8 body, exact bytes for a signature",
            outcome(lambda: ours.raw_body(binary)),
            outcome(lambda: LambdaFunctionUrlEvent(binary).decoded_body),
        )
    )
    nan = url_event(b'{"amount": NaN}')
    rows.append(
        (
            "JSON with NaN",
            outcome(lambda: ours.parse_json(ours.raw_body(nan))),
            outcome(lambda: LambdaFunctionUrlEvent(nan).json_body),
        )
    )
    big = url_event(b'{"x": "' + b"a" * (300 * 1024) + b'"}')
    rows.append(
        (
            "300 KiB body",
            outcome(lambda: len(ours.raw_body(big))),
            outcome(lambda: len(LambdaFunctionUrlEvent(big).json_body["x"])),
        )
    )
    app = LambdaFunctionUrlResolver()

    @app.post("/hook")
    def hook() -> dict[str, Any]:
        return {"ok": True}

    missing = app.resolve(url_event(b"{}", path="/other"), LambdaContext())
    rows.append(
        (
            "unknown path",
            "each handler has one URL: no routing",
            f"{missing['statusCode']} {json.loads(missing['body'])}",
        )
    )
    return rows


def secrets_behaviour() -> list[tuple[str, str, str]]:


    # moto loads slowly: only on this path
    from moto import mock_aws


    rows = [
        (
            "default cache lifetime",
            f"{DEFAULT_TTL_SECONDS:g} s",
            f"{parameters.constants.DEFAULT_MAX_AGE_SECS} s (POWERTOOLS_PARAMETERS_MAX_AGE)",
        )
    ]
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-2")
    with mock_aws():
        client = boto3.client("secretsmanager", region_name="eu-west-2")
        client.create_secret(Name="bin", SecretBinary=b"\x00\x01")
        client.create_secret(Name="obj", SecretString='{"key": "v"}')
        cache = SecretCache(client_factory=lambda: client)
        provider = parameters.SecretsProvider(boto3_client=client)
        rows.append(
            (
                "binary secret",
                outcome(lambda: cache.get_bytes("bin")),
                outcome(lambda: provider.get("bin")),
            )
        )
        rows.append(
            (
                "one field of a JSON secret",
                outcome(lambda: cache.get_field("obj", "key")),
                outcome(lambda: cast("dict[str, Any]", provider.get("obj", transform="json"))["key"]),
            )
        )
        rows.append(
            (
                "missing secret",
                outcome(lambda: cache.get_string("nope")),
                outcome(lambda: provider.get("nope")),
            )
        )
    return rows


def main() -> None:
    sys.path.insert(0, str(ROOT))
    load = os.getloadavg()[0]
    print(f"import time, median of {RUNS} fresh interpreters (ms; load average {load:.1f})")
    for label, statement in IMPORTS.items():
        print(f"  {label:55} {import_ms(statement):7.1f}")
    print("lines we maintain (non-blank, non-comment)")
    for module in ("secrets.py", "function_url.py"):
        print(f"  handlers/common/{module:20} {code_lines(ROOT / 'handlers/common' / module)}")
    print("behaviour: case | ours | Powertools")
    for case, mine, theirs in [*secrets_behaviour(), *function_url_behaviour()]:
        print(f"  {case} | {mine} | {theirs}")


if __name__ == "__main__":
    main()
