"""Cold start: every common module imports with no network, no credentials and none of the
measured cold-path weights (handlers/common/cold_path.py), which load on first use."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import handlers.common
from handlers.common.aws_clients import client, reset_clients, table
from handlers.common.cold_path import WEIGHTS

REPO = Path(__file__).resolve().parents[3]
# botocore.exceptions, Powertools' Logger and pydantic are imported at the top: measured, they
# cost nothing beyond the standard library or are needed before every first answer anyway.
HEAVY = [*sorted(WEIGHTS), "botocore.session", "aws_xray_sdk"]


def test_common_modules_import_without_heavy_dependencies() -> None:
    modules = sorted(
        f"handlers.common.{m.name}" for m in pkgutil.iter_modules(handlers.common.__path__)
    )
    assert {
        "handlers.common.webhook_signatures",
        "handlers.common.model_call",
        "handlers.common.secrets",
    } <= set(modules)
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}  # no AWS variables at all
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert json.loads(done.stdout) == []


def test_clients_are_created_once_and_lazily(aws: None) -> None:
    first = client("sqs")
    assert client("sqs") is first
    assert client("sqs", "us-east-1") is not first
    assert table("t") is table("t")
    reset_clients()
    assert client("sqs") is not first


def test_tables_of_a_region_share_one_client(aws: None) -> None:
    """One DynamoDB resource per region: its tables make one client (one connection on the
    first request), not one each."""
    orders, customers = table("orders"), table("customers")
    assert orders.meta.client is customers.meta.client
    assert table("orders", "us-east-1").meta.client is not orders.meta.client
    reset_clients()
    assert table("orders").meta.client is not orders.meta.client


def test_model_profile_disables_sdk_retries() -> None:
    from handlers.common.aws_clients import bedrock_runtime

    assert bedrock_runtime().meta.config.retries["total_max_attempts"] == 1
    assert client("sqs").meta.config.retries["total_max_attempts"] == 3


def _defers_build(node: ast.ClassDef) -> bool:
    for statement in node.body:
        if (
            isinstance(statement, ast.Assign)
            and [getattr(t, "id", None) for t in statement.targets] == ["model_config"]
            and isinstance(statement.value, ast.Call)
        ):
            return any(
                k.arg == "defer_build" and getattr(k.value, "value", None) is True
                for k in statement.value.keywords
            )
    return False


def test_every_handler_model_is_built_on_first_use() -> None:
    """A pydantic model builds its validator at class creation unless it defers the build:
    in a handler that is INIT time every cold start pays (and Lambda bills), for a model a
    refused request never uses. One way for every system: ``defer_build=True``."""
    eager = []
    for path in sorted((REPO / "handlers").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                getattr(b, "id", None) == "BaseModel" for b in node.bases
            ) and not _defers_build(node):
                eager.append(f"{path.relative_to(REPO)}:{node.name}")
    assert eager == []
