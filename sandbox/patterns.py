"""EventBridge event patterns and Lambda event-filter patterns (one grammar, one matcher).

Covers what the project's rules and filters use and a little more: exact values (strings,
numbers, booleans, null), ``prefix``, ``suffix``, ``equals-ignore-case``, ``anything-but``
(a value, a list, or a prefix/suffix), ``exists``, ``numeric`` ranges, ``wildcard`` and
``$or``. A field that is an array matches when any element matches. Not covered: ``cidr``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_MISSING = object()


def matches(pattern: Mapping[str, Any], event: Any) -> bool:
    """Whether ``event`` (a decoded JSON object) matches ``pattern``."""
    for key, rule in pattern.items():
        if key == "$or":
            if not any(matches(p, event) for p in rule):
                return False
            continue
        value = event.get(key, _MISSING) if isinstance(event, Mapping) else _MISSING
        if isinstance(rule, Mapping):
            if not isinstance(value, Mapping) or not matches(rule, value):
                return False
        elif isinstance(rule, list):
            if not _field_matches(rule, value):
                return False
        else:
            raise ValueError(f"pattern field {key!r} must be an object or a list")
    return True


def _field_matches(rules: list[Any], value: Any) -> bool:
    values = [] if value is _MISSING else (value if isinstance(value, list) else [value])
    for rule in rules:
        if isinstance(rule, Mapping) and "exists" in rule:
            if bool(rule["exists"]) == (value is not _MISSING):
                return True
            continue
        if any(_one(rule, v) for v in values):
            return True
    return False


def _equal(rule: Any, value: Any) -> bool:
    if isinstance(rule, bool) or isinstance(value, bool):
        return rule is value or (
            isinstance(rule, bool) and isinstance(value, bool) and rule == value
        )
    if isinstance(rule, int | float) and isinstance(value, int | float):
        return float(rule) == float(value)
    return bool(rule == value)


def _one(rule: Any, value: Any) -> bool:
    if not isinstance(rule, Mapping):
        return _equal(rule, value)
    if "prefix" in rule:
        wanted = rule["prefix"]
        if isinstance(wanted, Mapping):
            return isinstance(value, str) and value.lower().startswith(
                str(wanted["equals-ignore-case"]).lower()
            )
        return isinstance(value, str) and value.startswith(wanted)
    if "suffix" in rule:
        wanted = rule["suffix"]
        if isinstance(wanted, Mapping):
            return isinstance(value, str) and value.lower().endswith(
                str(wanted["equals-ignore-case"]).lower()
            )
        return isinstance(value, str) and value.endswith(wanted)
    if "equals-ignore-case" in rule:
        return isinstance(value, str) and value.lower() == str(rule["equals-ignore-case"]).lower()
    if "wildcard" in rule:
        regex = ".*".join(re.escape(part) for part in str(rule["wildcard"]).split("*"))
        return isinstance(value, str) and re.fullmatch(regex, value, re.DOTALL) is not None
    if "anything-but" in rule:
        but = rule["anything-but"]
        if isinstance(but, Mapping):
            return not _one(but, value)
        excluded = but if isinstance(but, list) else [but]
        return not any(_equal(e, value) for e in excluded)
    if "numeric" in rule:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        terms = list(rule["numeric"])
        ops = {
            "=": lambda a, b: a == b,
            "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b,
            ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b,
        }
        for i in range(0, len(terms), 2):
            if not ops[terms[i]](float(value), float(terms[i + 1])):
                return False
        return True
    raise ValueError(f"unsupported pattern operator {sorted(rule)}")


def sqs_filter_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """An SQS record as Lambda filters see it: ``body`` decoded when it is JSON."""
    view = dict(record)
    body = record.get("body")
    if isinstance(body, str):
        try:
            view["body"] = json.loads(body)
        except ValueError:
            view["body"] = body
    return view


def passes_filters(filters: tuple[Any, ...], record: Mapping[str, Any]) -> bool:
    """Lambda event filtering: no filters pass everything; otherwise any filter may match."""
    return not filters or any(matches(f, record) for f in filters)
