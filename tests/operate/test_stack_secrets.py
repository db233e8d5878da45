"""`make secrets`: every secret of the plan, in its own region (moto in us-east-1 and eu-west-2),
generated or read without echo, checked, idempotent, and never printed."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import boto3
import pytest

from components.config import ConfigError
from components.operate import stack_secrets as cmd
from components.secret_slot import PLACEHOLDER
from handlers.common.link_tokens import Keyring
from testsupport.graphs import GraphCache

CLIENT_ID = "0123456789abcdef0123456789abcdef"
CLIENT_SECRET = "shpss_" + "A1b2C3d4" * 4
GIVEN = {
    "dm-crm-read": "pat-na1-11111111-2222-3333-4444-555555555555",
    "dm-crm-write": "pat-na1-66666666-2222-3333-4444-555555555555",
    "ler-crm-key": "pat-eu1-77777777-2222-3333-4444-555555555555",
    "ler-enrichment-key": "pdl_" + "x" * 40,
    "upsr-store-key": json.dumps({"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}),
    "rrs-webhook-secret": "jobtool-signing-" + "z" * 24,
}


SECRETS_MANAGER = {"secretStore": "secretsmanager"}
"""The documents' store, the default of secretStore (both stack files choose ssm)."""


@pytest.fixture(params=["ssm", "secretsmanager"])
def planned(
    request: pytest.FixtureRequest, graphs: GraphCache, monkeypatch: pytest.MonkeyPatch, aws: None
) -> list[cmd.StackSecret]:
    # The same command fills Parameter Store SecureStrings or Secrets Manager secrets.
    found = cmd.secrets_in(graphs.run("dev", None if request.param == "ssm" else SECRETS_MANAGER))
    monkeypatch.setattr(cmd, "stack_secrets", lambda stack: found)
    for s in found:  # what `pulumi up` leaves: each secret, empty, in its region
        client = boto3.client(s.store, region_name=s.region)  # type: ignore[call-overload]
        if s.store == "ssm":
            client.put_parameter(Name=s.physical, Value=PLACEHOLDER, Type="SecureString")
        else:
            client.create_secret(Name=s.physical)
    return found


def _value(secret: cmd.StackSecret) -> str | None:
    client = boto3.client(secret.store, region_name=secret.region)  # type: ignore[call-overload]
    if not cmd.has_value(client, secret):
        return None
    return cmd.read_value(client, secret)


def _run(capsys: pytest.CaptureFixture[str], lines: dict[str, str], *argv: str) -> tuple[int, str]:
    text = "".join(f"{k}={v}\n" for k, v in lines.items())
    code = cmd.main(["--stack", "dev", *argv], stdin=io.StringIO(text))
    return code, capsys.readouterr().out


def _statuses(out: str) -> dict[str, str]:
    """Status by seed name (``dev-dm-link-key`` and ``/dev/dm-link-key`` are both dm-link-key)."""
    rows = [line.split(None, 3) for line in out.splitlines()[1:] if line.startswith(("dm ", "ler", "ls ", "upsr", "rrs"))]
    return {"dev-" + re.sub(r"^(/[a-z0-9]+/|[a-z0-9]+-)", "", row[1]): row[3] for row in rows}


def test_the_stores_follow_secret_store(graphs: GraphCache) -> None:
    assert {s.store for s in cmd.secrets_in(graphs.run("dev"))} == {"ssm"}
    assert {s.store for s in cmd.secrets_in(graphs.run("prod"))} == {"ssm"}
    assert {s.store for s in cmd.secrets_in(graphs.run("dev", SECRETS_MANAGER))} == {"secretsmanager"}
    assert {s.physical for s in cmd.secrets_in(graphs.run("dev"))} >= {"/dev/dm-crm-write"}


def test_the_plan_has_seventeen_secrets_in_two_regions(planned: list[cmd.StackSecret]) -> None:
    assert len(planned) == 17  # dev mails the ls report (ls-report-link-key); ler-rescue-link-key
    assert {s.region for s in planned} == {"us-east-1", "eu-west-2"}
    assert sum(s.region == "eu-west-2" for s in planned) == 12  # rrs's, upsr's and ler's forget salts
    assert {s.name for s in planned} == set(cmd.KINDS)


def test_the_readme_counts_prod_secrets_as_the_plan_does(graphs: GraphCache) -> None:
    """Deploy step 10 tells the deployer how many secrets and where (a stale count sends them
    looking for a secret that is not there)."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "deploy.md").read_text()
    said = re.search(r"\((\d+) of prod's (\d+) live in eu-west-2\)", readme)
    assert said is not None, "docs/deploy.md step 10 no longer says how many secrets prod has"
    prod = cmd.secrets_in(graphs.run("prod"))
    in_london = sum(s.region == "eu-west-2" for s in prod)
    assert (int(said.group(1)), int(said.group(2))) == (in_london, len(prod))


def test_every_secret_is_set_in_its_own_region_and_never_printed(
    planned: list[cmd.StackSecret], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(capsys, GIVEN)
    assert code == 0, out
    status = _statuses(out)
    values = {s.name: _value(s) for s in planned}
    assert all(values.values()), [n for n, v in values.items() if not v]
    for name in ("dm-link-key", "ls-report-link-key", "ler-rescue-link-key", "upsr-addlink-key", "rrs-messaging-key"):
        assert status[f"dev-{name}"] == "generated"
        ring = Keyring.from_secret_string(values[name] or "")
        assert len(ring.keys[ring.active_kid]) >= 32
    for name in ("ls-email-hash-key", "ler-intake-secret"):
        assert status[f"dev-{name}"] == "generated" and len(values[name] or "") >= 32
    assert values["upsr-webhook-secret"] == values["upsr-store-key"]  # one paste fills both
    assert status["dev-upsr-webhook-secret"] == "copied from upsr-store-key"
    for name, value in GIVEN.items():
        assert values[name] == value and status[f"dev-{name}"] == "set"
    for written in values.values():
        assert written and written not in out and CLIENT_SECRET not in out
    intake = next(s for s in planned if s.name == "ler-intake-secret")
    assert cmd.read_command(intake) in out and "--region eu-west-2" in cmd.read_command(intake)


def test_a_second_run_leaves_set_secrets_unless_asked(
    planned: list[cmd.StackSecret], capsys: pytest.CaptureFixture[str]
) -> None:
    _run(capsys, GIVEN)
    before = {s.name: _value(s) for s in planned}
    code, out = _run(capsys, {})
    assert code == 0
    assert set(_statuses(out).values()) == {"already set"}
    assert {s.name: _value(s) for s in planned} == before
    code, out = _run(capsys, {}, "--replace", "dm-link-key")
    after = {s.name: _value(s) for s in planned}
    assert _statuses(out)["dev-dm-link-key"] == "generated"
    assert after["dm-link-key"] != before["dm-link-key"]
    assert {k: v for k, v in after.items() if k != "dm-link-key"} == {
        k: v for k, v in before.items() if k != "dm-link-key"
    }


def test_a_value_of_the_wrong_shape_is_refused_by_name(
    planned: list[cmd.StackSecret], capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = dict(GIVEN)
    wrong["upsr-store-key"] = json.dumps({"client_id": CLIENT_ID, "client_secret": "not-a-secret"})
    wrong["dm-crm-read"] = CLIENT_SECRET  # a Shopify secret pasted as the HubSpot key
    code, out = _run(capsys, wrong)
    assert code == 1
    status = _statuses(out)
    assert status["dev-upsr-store-key"].startswith("refused: Shopify client secret")
    assert status["dev-dm-crm-read"].startswith("refused: HubSpot key")
    assert "not-a-secret" not in out and CLIENT_SECRET not in out
    assert _value(next(s for s in planned if s.name == "dm-crm-read")) is None


def test_unset_credentials_are_reported_empty(
    planned: list[cmd.StackSecret], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(capsys, {})
    assert code == 1
    status = _statuses(out)
    assert status["dev-dm-crm-read"] == "empty" and status["dev-upsr-webhook-secret"] == "empty"
    assert status["dev-dm-link-key"] == "generated"


def test_a_terminal_is_prompted_without_echo(planned: list[cmd.StackSecret]) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    asked: list[str] = []
    answers = iter([GIVEN["dm-crm-read"], "", "", "", CLIENT_ID, CLIENT_SECRET, ""])

    def prompt(label: str) -> str:
        asked.append(label)
        return next(answers)

    values = cmd.Values(Tty(), prompt)
    clients: dict[str, Any] = {}
    results = dict(
        (s.name, status)
        for s, status in cmd.run(
            planned,
            values,
            lambda service, r: clients.setdefault(
                f"{service} {r}", boto3.client(service, region_name=r)  # type: ignore[call-overload]
            ),
        )
    )
    assert results["dm-crm-read"] == "set" and results["upsr-store-key"] == "set"
    assert results["upsr-webhook-secret"] == "copied from upsr-store-key"
    assert any("client secret" in label for label in asked)
    assert json.loads(_value(next(s for s in planned if s.name == "upsr-webhook-secret")) or "")[
        "client_secret"
    ] == CLIENT_SECRET


def test_stdin_lines_name_known_secrets_and_a_bad_line_is_not_echoed() -> None:
    with pytest.raises(ConfigError) as err:
        cmd.Values(io.StringIO(f"storeKey={CLIENT_SECRET}\n"))
    assert CLIENT_SECRET not in str(err.value) and "stdin line 1" in str(err.value)


def test_the_bytecode_note_is_left_to_make_plan(
    graphs: GraphCache, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Whether archives carry bytecode ("no Python 3.14 found") matters to `make plan` and
    `pulumi up`; `make secrets` reads only names and regions from the plan."""
    import logging

    from components.offline import engine

    dev = graphs.run("dev")
    caplog.clear()  # building it may have said so already

    def run(stack: str, overrides: Any = None) -> Any:
        logging.getLogger("components.archive").warning("no Python 3.14 found")  # as archive.build does
        return dev

    monkeypatch.setattr(engine, "run", run)
    with caplog.at_level(logging.WARNING):
        assert cmd.stack_secrets("dev") == cmd.secrets_in(dev)
    assert not [r.getMessage() for r in caplog.records if r.name == "components.archive"]
