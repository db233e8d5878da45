"""The stack file (``Pulumi.<stack>.yaml``) as a source of config: read it, and say where in it
a config problem is.

A problem is one line, ``Pulumi.dev.yaml:58:7: crm-automations:systems.upsr.storeKey: unknown
key; did you mean storeDomain?``: file, line and column first, as compilers print them, so an
editor jumps there. A YAML syntax error or a missing stack file is such a line too, never a
traceback. Lines and columns count from 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from components.config_problems import PROJECT, ConfigError, Problem


def load(path: Path) -> dict[str, Any]:
    """The stack file's ``config:`` mapping, or ConfigError in one line."""
    if not path.is_file():
        stacks = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml")
                        for p in path.parent.glob("Pulumi.*.yaml"))
        known = f" (stacks here: {', '.join(stacks)})" if stacks else ""
        raise ConfigError(f"{path.name}: no such stack file{known}")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{path.name}:{mark.line + 1}:{mark.column + 1}" if mark else path.name
        what = " ".join(str(part) for part in (err.problem, err.context) if part)
        raise ConfigError(f"{where}: YAML syntax error: {what}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path.name}: YAML syntax error: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("config", {}), dict | None):
        raise ConfigError(f"{path.name}:1:1: a stack file is a mapping with a config: mapping")
    return dict(data.get("config") or {})


def _child(node: Node, part: int | str) -> tuple[Node, Node] | None:
    """(key node, value node) of ``part`` in a mapping, or (item, item) of a sequence index."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == str(part):
                return key, value
    if isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
        item = node.value[part]
        return item, item
    return None


def position(text: str, problem: Problem) -> tuple[int, int] | None:
    """1-based (line, column) of the problem's key (an unknown key) or value (a wrong one); the
    nearest enclosing key when the key itself is absent (a missing required key)."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return None
    found = _child(root, "config") if root is not None else None
    if found is None or not problem.loc:
        return None
    path: list[int | str] = [f"{PROJECT}:{problem.loc[0]}", *problem.loc[1:]]
    node = found[1]
    best: Node | None = None
    for depth, part in enumerate(path):
        pair = _child(node, part)
        if pair is None:
            break
        key, node = pair
        last = depth == len(path) - 1
        best = key if (not last or problem.unknown_key) else node
    if best is None:
        return None
    return best.start_mark.line + 1, best.start_mark.column + 1


def located(err: ConfigError, source: Path) -> ConfigError:
    """The same problems, each line led by ``file:line:column`` (or the file alone)."""
    text = source.read_text() if source.is_file() else ""
    lines = []
    for problem in err.problems:
        where = position(text, problem) if text else None
        lead = f"{source.name}:{where[0]}:{where[1]}" if where else source.name
        body = f"{problem.key}: {problem.message}" if problem.loc else problem.message
        lines.append(f"{lead}: {body}")
    return ConfigError(err.problems, lines)
