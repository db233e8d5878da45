"""dm's handlers read their environment through the contract's settings records: a variable the
infra sets is never re-defaulted, so a missing one fails the invocation, naming it."""

from __future__ import annotations

import json

import pytest

from handlers.common import settings
from handlers.common.settings import MissingSetting, Settings
from handlers.duplicate_merger.contract import BlockSettings, MergeSettings, ScoreSettings
from handlers.duplicate_merger.functions import block, merge, score
from tests.handlers.duplicate_merger.conftest import DmAws


@pytest.mark.parametrize(
    ("kind", "variable"),
    [
        (BlockSettings, "BLOCK_CAP"),
        (BlockSettings, "PHONE_REGION"),
        (BlockSettings, "PAIR_TTL_DAYS"),
        (BlockSettings, "HUBSPOT_API_VERSION"),
        (ScoreSettings, "RECORD_FLOOR"),
        (ScoreSettings, "PAIR_TTL_DAYS"),
        (MergeSettings, "REVIEW_INDEX"),
        (MergeSettings, "CRM_BASE_URL"),
        (MergeSettings, "LINK_TTL_DAYS"),
        (MergeSettings, "UNDO_DAYS"),
    ],
)
def test_a_missing_variable_fails_naming_it(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch, kind: type[Settings], variable: str
) -> None:
    assert kind.from_environ()  # the conftest's environment is complete
    monkeypatch.delenv(variable)
    with pytest.raises(MissingSetting, match=variable):
        kind.from_environ()


def test_a_malformed_number_fails_naming_it(dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECORD_FLOOR", "low")
    with pytest.raises(MissingSetting, match="RECORD_FLOOR"):
        ScoreSettings.from_environ()


@pytest.mark.parametrize(
    ("kind", "variable"),
    [(BlockSettings, "CRM_READ_SECRET"), (MergeSettings, "CRM_WRITE_SECRET"),
     (MergeSettings, "LINK_KEY_SECRET")],
)
def test_a_secret_value_in_place_of_its_name_is_refused(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch, kind: type[Settings], variable: str
) -> None:
    monkeypatch.setenv(variable, '{"token": "pat-na1-pasted"}')
    with pytest.raises(MissingSetting, match=variable):
        kind.from_environ()


def test_the_public_url_is_the_one_optional_variable(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PUBLIC_URL")
    assert MergeSettings.from_environ().public_url is None


def test_each_handler_fails_loudly_without_its_settings(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No record is dropped, no batch item reported: the invocation itself fails."""
    message = {"messageId": "m1", "body": json.dumps({"pair_key": "1#2"})}
    monkeypatch.delenv("RECORD_FLOOR")
    with pytest.raises(MissingSetting, match="RECORD_FLOOR"):
        score.handler({"Records": [{**message, "eventSource": "aws:sqs"}]}, None)
    monkeypatch.delenv("REVIEW_INDEX")
    settings.reset()
    with pytest.raises(MissingSetting, match="REVIEW_INDEX"):
        merge.handler({"action": "digest"}, None)
    monkeypatch.delenv("BLOCK_CAP")
    with pytest.raises(MissingSetting, match="BLOCK_CAP"):
        block.handler({"action": "block"}, None)
