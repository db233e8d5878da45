"""dm's scenario on the dev stack's moto world: the secrets' values, the public URL, handles."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.handlers.conftest import FunctionEnv

KEYRING = {"active_kid": "k1", "keys": {"k1": "k" * 40}}


@dataclass
class DmAws:
    """Handles on the moto resources a test inspects."""

    pairs: Any
    decisions: Any
    merges: Any
    bucket: str
    blocks_url: str
    merges_url: str


@pytest.fixture
def dm_aws(function_env: FunctionEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[DmAws]:
    """dm's resources as the dev stack deploys them, every dm function's environment from the
    graph, and this scenario's secrets and public URL."""
    from handlers.common.aws_clients import client, table

    env = function_env("dm-block", "dm-score", "dm-merge")
    secrets = client("secretsmanager")
    secrets.put_secret_value(SecretId=env["LINK_KEY_SECRET"], SecretString=json.dumps(KEYRING))
    secrets.put_secret_value(SecretId=env["CRM_WRITE_SECRET"], SecretString="unused-by-the-fake")
    monkeypatch.setenv("PUBLIC_URL", "https://dm.example.test")
    yield DmAws(
        table(env["PAIRS_TABLE"]),
        table(env["DECISIONS_TABLE"]),
        table(env["MERGES_TABLE"]),
        env["UNDO_BUCKET"],
        env["BLOCKS_QUEUE_URL"],
        env["MERGES_QUEUE_URL"],
    )
