"""Helpers for infra tests: run a small program of building blocks on the mock engine."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from components.deployment import Deployment
from components.mail_identity import MailIdentities
from components.offline.engine import ACCOUNT_ID, Resource, run_program, stack_config_values

BlocksProgram = Callable[[Deployment], Mapping[str, Any]]


@pytest.fixture
def fake_archives(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Block tests do not need real archives (tests/test_archive.py covers those)."""
    archive = tmp_path / "fn.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    monkeypatch.setattr("components.scoped_lambda.build_function_archive", lambda *a, **k: archive)


def deployment(
    prefix: str = "dev", environment: str = "dev", region: str = "eu-west-2"
) -> Deployment:
    from components.arns import Arns

    return Deployment(
        prefix=prefix,
        environment=environment,
        system="tst",
        region=region,
        account_id=ACCOUNT_ID,
        partition="aws",
        provider=None,
        powertools_layer_arn=f"arn:aws:lambda:{region}:017000801446:layer:Powertools:1",
        mail=MailIdentities(Arns("aws", region, ACCOUNT_ID), None, prefix),
    )


def run_blocks(
    program: BlocksProgram, *, prefix: str = "dev", environment: str = "dev"
) -> list[Resource]:
    """Run ``program(deployment)`` on the mock engine; return every registered resource."""
    values = stack_config_values("dev")
    resources, _ = run_program(
        lambda: program(deployment(prefix, environment)), stack=prefix, values=values
    )
    return resources


def of_type(resources: list[Resource], token: str) -> list[Resource]:
    return [r for r in resources if r.type == token]


def statements(policy_resource: Resource) -> list[dict[str, Any]]:
    return list(json.loads(policy_resource.inputs["policy"])["Statement"])
