"""The GitHub Actions workflows under .github/workflows/: linted, pinned, and held to this
repository's own commands, roles and docs."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from components import config_source

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
BIN = Path(sys.executable).parent
CREDENTIALS = "aws-actions/configure-aws-credentials"
PULUMI = "pulumi/actions"


def _load(path: Path) -> dict[str, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(path.read_text())
    # YAML 1.1 reads the key `on` as True.
    if True in loaded:
        loaded["on"] = loaded.pop(True)
    return loaded


def _jobs(name: str) -> dict[str, dict[str, Any]]:
    jobs: dict[str, dict[str, Any]] = _load(WORKFLOWS / name)["jobs"]
    return jobs


def _steps(job: dict[str, Any], uses: str) -> list[dict[str, Any]]:
    return [s for s in job.get("steps", []) if str(s.get("uses", "")).startswith(f"{uses}@")]


def _runs(job: dict[str, Any]) -> list[str]:
    return [str(s["run"]) for s in job.get("steps", []) if "run" in s]


def test_there_are_workflows() -> None:
    assert [p.name for p in FILES] == ["deploy.yml", "pull-request.yml"]


def test_actionlint_is_clean() -> None:
    result = subprocess.run(
        [str(BIN / "actionlint"), "-no-color", *map(str, FILES)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_is_clean() -> None:
    """zizmor's security audits, offline (no GitHub API): template injection, credential
    persistence, excessive permissions, unpinned actions..."""
    result = subprocess.run(
        [str(BIN / "zizmor"), "--offline", "--no-progress", "--format", "plain", str(WORKFLOWS)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings to report" in result.stdout + result.stderr


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_action_is_pinned_by_commit_with_its_version(path: Path) -> None:
    for line in path.read_text().splitlines():
        if "uses:" not in line:
            continue
        assert re.search(r"uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$", line), line


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([a-z][a-z0-9-]*):", text, re.MULTILINE))


def _commands(script: str) -> list[list[str]]:
    commands: list[list[str]] = []
    for line in script.splitlines():
        for part in re.split(r"&&|;|\|\|", line):
            words = shlex.split(part, comments=True)
            if ">" in words:
                words = words[: words.index(">")]
            if words:
                commands.append(words)
    return commands


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_command_is_a_make_target_or_a_script_of_this_repository(path: Path) -> None:
    targets = _make_targets()
    for job in _load(path)["jobs"].values():
        for script in _runs(job):
            for words in _commands(script):
                program, rest = words[0], words[1:]
                if program == "make":
                    if rest[:1] == ["-C"]:
                        rest = rest[2:]  # another checkout of this repository (the base)
                    named = [w for w in rest if "=" not in w and not w.startswith("-")]
                    assert named and set(named) <= targets, (path.name, words)
                else:
                    script_path = ROOT / program
                    assert script_path.is_file() and script_path.stat().st_mode & 0o111, words


def test_every_pull_request_runs_the_checks_the_plans_and_the_previews() -> None:
    workflow = _load(WORKFLOWS / "pull-request.yml")
    assert list(workflow["on"]) == ["pull_request"]
    jobs = workflow["jobs"]
    assert _runs(jobs["test"]) == [".ci/run"]  # make test, as the project's CI runs it
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert jobs["plan"]["strategy"]["matrix"]["stack"] == ["dev", "prod"]
    plans = " ".join(_runs(jobs["plan"]))
    assert "make plan" in plans and "BASE=" in plans and "JSON=" in plans
    assert jobs["preview"]["strategy"]["matrix"]["stack"] == ["dev", "prod"]
    (preview,) = _steps(jobs["preview"], PULUMI)
    assert preview["with"]["command"] == "preview"
    assert preview["with"]["policyPacks"] == "policies"
    assert preview["with"]["diff"] is True and preview["with"]["comment-on-pr"] is True


def test_main_deploys_dev_then_verifies_and_a_release_deploys_prod_behind_its_environment() -> None:
    workflow = _load(WORKFLOWS / "deploy.yml")
    assert workflow["on"] == {"push": {"branches": ["main"]}, "release": {"types": ["published"]}}
    dev, prod = workflow["jobs"]["dev"], workflow["jobs"]["prod"]
    assert dev["if"] == "github.event_name == 'push'" and "environment" not in dev
    assert prod["if"] == "github.event_name == 'release'" and prod["environment"] == "prod"
    steps = [s.get("uses", s.get("run", "")).split("@")[0] for s in dev["steps"]]
    assert steps.index(PULUMI) < steps.index("make verify STACK=dev")
    for job, stack in ((dev, "dev"), (prod, "prod")):
        (up,) = _steps(job, PULUMI)
        assert up["with"]["command"] == "up" and up["with"]["stack-name"] == stack
        assert up["with"]["policyPacks"] == "policies"


def _subject_source(workflow: dict[str, Any], job: dict[str, Any]) -> str:
    """The OIDC subject kind GitHub gives the job's token (GitHub, "OpenID Connect
    reference", https://docs.github.com/en/actions/reference/security/oidc)."""
    if "environment" in job:
        return f"environment:{job['environment']}"
    if "pull_request" in workflow["on"]:
        return "pull_request"
    return "branch:" + str(workflow["on"]["push"]["branches"][0])


def test_each_job_that_assumes_a_role_is_one_its_bootstrap_trusts() -> None:
    """The sub a job presents is in the previewFrom or deployFrom of bootstrap/Pulumi.<stack>.yaml."""
    checked = 0
    for path in FILES:
        workflow = _load(path)
        assert workflow["permissions"] == {}
        for name, job in workflow["jobs"].items():
            if not _steps(job, CREDENTIALS):
                assert "id-token" not in job.get("permissions", {}), name
                continue
            assert job["permissions"]["id-token"] == "write"
            (up,) = _steps(job, PULUMI)
            kind = "previewFrom" if up["with"]["command"] == "preview" else "deployFrom"
            stacks = job.get("strategy", {}).get("matrix", {}).get("stack") or [up["with"]["stack-name"]]
            for stack in stacks:
                raw = config_source.load(ROOT / "bootstrap" / f"Pulumi.{stack}.yaml")
                trusted = raw[f"crm-pipeline-bootstrap:{kind}"]
                assert _subject_source(workflow, job) in trusted, (path.name, name, stack)
                checked += 1
    assert checked == 4


def test_docs_name_every_repository_setting_the_workflows_read() -> None:
    docs = (ROOT / "docs" / "pipeline.md").read_text()
    used = set()
    for path in FILES:
        used |= set(re.findall(r"\b(?:vars|secrets)\.([A-Z_]+)", path.read_text()))
    used.discard("GITHUB_TOKEN")  # GitHub's own, per job
    assert used == {
        "AWS_PREVIEW_ROLE_DEV",
        "AWS_PREVIEW_ROLE_PROD",
        "AWS_DEPLOY_ROLE_DEV",
        "AWS_DEPLOY_ROLE_PROD",
        "PULUMI_ACCESS_TOKEN",
        "PULUMI_BACKEND_URL",
        "PULUMI_CONFIG_PASSPHRASE",
    }
    for name in used:
        assert f"`{name}`" in docs, name
