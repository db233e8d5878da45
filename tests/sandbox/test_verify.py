"""`make verify` pointed at the sandbox: the command a deployer runs after `pulumi up`, run here
against the whole dev stack on this machine, must print ok for all five systems; and it fails,
naming the system and the reason, when a secret is empty or holds another value."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from components.offline import engine
from components.operate import verify
from sandbox import scenarios
from sandbox.control import ControlServer
from sandbox.core import Sandbox
from sandbox.play import enabled_systems
from testsupport.graphs import shared

DEV = shared().program("dev")


@pytest.fixture(scope="module")
def running() -> Iterator[tuple[Sandbox, str]]:
    """`make sandbox`: the dev stack with its scenarios' secrets and data, and the control API."""
    with Sandbox(DEV) as sb:
        for key in enabled_systems(sb.graph):
            scenario = scenarios.load(key)
            if scenario is not None:
                scenario.prepare(sb)
        control = ControlServer(sb, port=0)
        control.start()
        try:
            yield sb, control.url
        finally:
            control.stop()


def _verify(url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, str]]:
    monkeypatch.setattr(engine, "run", lambda stack, overrides=None: DEV)
    code = verify.main(["--stack", "dev", "--sandbox", url])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.split(None, 1)[0:1] in (["dm"], ["ler"], ["ls"], ["upsr"], ["rrs"])]
    return code, {line.split()[0]: line.split(None, 1)[1] for line in lines}


def test_verify_against_the_sandbox_prints_ok_for_all_five(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = running
    code, seen = _verify(url, monkeypatch, capsys)
    assert set(seen) == {"dm", "ler", "ls", "upsr", "rrs"}
    assert all(line.startswith("ok: ") for line in seen.values()), seen
    assert code == 0


def test_verify_leaves_no_touch_behind(running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    sb, url = running
    before = sb.items("ls-touches")
    _, seen = _verify(url, monkeypatch, capsys)
    assert seen["ls"].startswith("ok: touch recorded")  # it wrote one, and found it
    assert sb.items("ls-touches") == before


def test_a_secret_that_differs_fails_its_system_by_name(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job tool holds another secret than the stack: rrs fails, named, and the rest pass."""
    _, url = running
    real = verify.Target.secret

    def other(self: verify.Target, secret: verify.StackSecret) -> str:
        return "a-secret-the-stack-does-not-hold" if secret.name == "rrs-webhook-secret" else real(self, secret)

    monkeypatch.setattr(verify.Target, "secret", other)
    code, seen = _verify(url, monkeypatch, capsys)
    assert code == 1
    assert seen["rrs"].startswith("failed: ") and "got HTTP 401 invalid_signature" in seen["rrs"], seen
    assert all(seen[k].startswith("ok: ") for k in ("dm", "ler", "ls", "upsr"))
