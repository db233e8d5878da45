"""The policy pack as ``pulumi policy publish`` sees it: its folder alone, its own requirements.

The folder is copied, under another name, to a directory where nothing of this repository is
importable; a fresh virtual environment gets ``policies/requirements.txt`` (uv, from its cache
when it holds them, else from PyPI: the test is marked ``pypi``); the pack is started the way
the Python language host starts an analyzer (``python -u -m pulumi.policy <engine> <pack>``)
and is asked, over the analyzer's gRPC protocol, for its policies and its verdict on the dev
stack's graph, broken on purpose in a few places. The verdict must be the one the same rules
give in this process (``policies.runner``), finding for finding.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy import PolicyResource, ResourceValidationPolicy
from pulumi_policy.deserialize import serialize_properties

from components.offline.engine import Graph
from components.offline.policy_view import policy_resources
from policies.pack import ALL_POLICIES
from policies.runner import evaluate, policy_configs
from policies.testing import make_resources
from testsupport import tools
from testsupport.graphs import GraphCache

ROOT = Path(__file__).resolve().parents[2]
PACK_DIR = ROOT / "policies"

pytestmark = pytest.mark.pypi

Finding = tuple[str, str, str]
"""(policy, message, urn)."""


def _clean_env() -> dict[str, str]:
    """This process's environment without anything that would let the repository leak in."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _requirements() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (PACK_DIR / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip().lower()] = version.strip()
    return pins


def test_requirements_pin_what_the_pack_imports_at_the_locked_versions() -> None:
    pins = _requirements()
    locked = {
        p["name"]: p["version"] for p in tomllib.loads((ROOT / "uv.lock").read_text())["package"]
    }
    assert set(pins) == {"pulumi", "pulumi-policy", "policy-sentry"}
    assert all(pins[name] == locked[name] for name in pins), (pins, locked)
    imported: set[str] = set()
    for path in PACK_DIR.rglob("*.py"):
        if "venv" in path.relative_to(PACK_DIR).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"policies", "__future__"}
    assert third_party == {"pulumi_policy", "policy_sentry"}, third_party


def test_publish_leaves_the_packs_venv_behind() -> None:
    """`pulumi policy publish` archives the folder minus what its own .gitignore names
    (pulumi/docs#17027): the venv PulumiPolicy.yaml names is built where the pack runs."""
    assert {"venv/", "__pycache__/"} <= set((PACK_DIR / ".gitignore").read_text().split())


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pack folder alone, in a folder of another name, with its own venv inside."""
    copy = tmp_path_factory.mktemp("published") / "crm-automations-guard-v0.2.0"
    shutil.copytree(PACK_DIR, copy, ignore=shutil.ignore_patterns("__pycache__", "venv"))
    venv = copy / "venv"  # PulumiPolicy.yaml's runtime.options.virtualenv
    uv, env = tools.uv(), _clean_env()
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    install = [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python")]
    install += ["-r", str(copy / "requirements.txt")]
    if subprocess.run([*install, "--offline"], env=env, capture_output=True).returncode != 0:
        subprocess.run(install, env=env, check=True)  # the cache lacks them: PyPI
    return copy


@pytest.fixture(scope="module")
def analyzer(pack: Path) -> Iterator[analyzer_pb2_grpc.AnalyzerStub]:
    """The pack served as the engine starts it, from the pack's folder and venv only."""
    python = pack / "venv" / "bin" / "python"
    process = subprocess.Popen(
        [str(python), "-u", "-m", "pulumi.policy", "127.0.0.1:0", str(pack)],
        cwd=pack,
        env=_clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        port = process.stdout.readline().decode().strip()
        if not port.isdigit():
            process.kill()
            raise AssertionError(f"the pack did not start:\n{process.stderr.read().decode()}")
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield analyzer_pb2_grpc.AnalyzerStub(channel)
    finally:
        process.kill()
        process.wait()


def _struct(props: Mapping[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(dict(serialize_properties(dict(props))))
    return struct


def _raw_props(resource: PolicyResource) -> dict[str, Any]:
    props = resource.props
    target = props["__target"] if hasattr(props, "__getitem__") and "__target" in props else props
    return dict(target)


def _options(resource: PolicyResource) -> analyzer_pb2.AnalyzerResourceOptions:
    return analyzer_pb2.AnalyzerResourceOptions(
        parent=resource.opts.parent or "", ignoreChanges=list(resource.opts.ignore_changes)
    )


def _served_verdict(
    stub: analyzer_pb2_grpc.AnalyzerStub,
    resources: list[PolicyResource],
    config: Mapping[str, Any],
) -> list[Finding]:
    """What the served pack reports, as the engine asks: Analyze per resource, AnalyzeStack once."""
    stub.Configure(
        analyzer_pb2.ConfigureAnalyzerRequest(
            policyConfig={
                name: analyzer_pb2.PolicyConfig(
                    enforcementLevel=analyzer_pb2.MANDATORY, properties=_struct(props)
                )
                for name, props in policy_configs(config).items()
                if props
            }
        )
    )
    found: list[Finding] = []

    def collect(response: analyzer_pb2.AnalyzeResponse, default_urn: str) -> None:
        for d in response.diagnostics:
            message = d.message.removeprefix(d.description).removeprefix("\n")
            found.append((d.policyName, message, d.urn or default_urn))

    for r in resources:
        request = analyzer_pb2.AnalyzeRequest(
            type=r.resource_type,
            properties=_struct(_raw_props(r)),
            urn=r.urn,
            name=r.name,
            options=_options(r),
        )
        collect(stub.Analyze(request), r.urn)
    stack = analyzer_pb2.AnalyzeStackRequest(
        resources=[
            analyzer_pb2.AnalyzerResource(
                type=r.resource_type,
                properties=_struct(_raw_props(r)),
                urn=r.urn,
                name=r.name,
                options=_options(r),
                parent=r.parent.urn if r.parent is not None else "",
                dependencies=[d.urn for d in r.dependencies],
            )
            for r in resources
        ]
    )
    collect(stub.AnalyzeStack(stack), "")
    return sorted(found)


def _local_verdict(resources: list[PolicyResource], config: Mapping[str, Any]) -> list[Finding]:
    return sorted((v.policy_name, v.message, v.urn or "") for v in evaluate(resources, config))


def _broken(graph: Graph) -> list[PolicyResource]:
    """The dev graph and a queue that breaks a resource rule and stack rules."""
    return [
        *policy_resources(graph),
        *make_resources(
            [("aws:sqs/queue:Queue", "stray", {"name": "dev-stray", "tags": {"crm:x": "a (b)"}})]
        ),
    ]


def test_the_published_pack_lists_the_same_policies(
    analyzer: analyzer_pb2_grpc.AnalyzerStub,
) -> None:
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == "crm-automations-guard"
    assert [p.name for p in info.policies] == [p.name for p in ALL_POLICIES]
    kinds = {p.name: isinstance(p, ResourceValidationPolicy) for p in ALL_POLICIES}
    assert any(kinds.values()) and not all(kinds.values())  # both kinds cross the wire


def test_the_published_pack_gives_the_tests_verdict_on_the_dev_graph(
    analyzer: analyzer_pb2_grpc.AnalyzerStub, graphs: GraphCache
) -> None:
    graph = graphs.run("dev")
    config = {"environment": graph.config.environment}
    clean = policy_resources(graph)
    assert _served_verdict(analyzer, clean, config) == _local_verdict(clean, config) == []
    broken = _broken(graph)
    served = _served_verdict(analyzer, broken, config)
    assert served == _local_verdict(broken, config)
    assert {"tag-values", "queue-hygiene"} <= {policy for policy, _, _ in served}
