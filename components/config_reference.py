"""The configuration reference (docs/configuration.md), generated from the schema so it
cannot drift.

``python -m components.config_reference`` prints the Markdown table; ``make docs``
(components/offline/docs.py) writes it into docs/configuration.md, and a test fails when the
file differs.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import AfterValidator, BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from components.config import CHECKED_KINDS, PROJECT, StackConfig, Systems


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation such as ``DmSettings | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _model_of(arg)
            if found is not None:
                return found
    return None


_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _type_name(annotation: Any) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (tuple, list):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is not None and "Mapping" in repr(origin):
        return f"map of {_type_name(args[0])} to {_type_name(args[1])}"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in args if a is not type(None))
    return _NAMES.get(annotation, getattr(annotation, "__name__", repr(annotation)))


def _default(info: FieldInfo) -> str:
    if info.default is PydanticUndefined and info.default_factory is None:
        return "required"
    if info.default_factory is not None:
        return "`{}`"
    value = info.default
    if isinstance(value, BaseModel):
        return "see below"
    return f"`{json.dumps(value)}`" if value not in ("", None) else ("`\"\"`" if value == "" else "none")


def _doc(model: type[BaseModel], name: str) -> str:
    """The field's docstring, or the one it overrides in a base settings class."""
    for klass in model.__mro__:
        fields = getattr(klass, "model_fields", {})
        if name in fields and fields[name].description:
            text: str = fields[name].description
            return " ".join(text.split()).replace("``", "`")
    return ""


def rows(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, str, str, str]]:
    """(key, type, default, description) for every leaf and section of ``model``."""
    for name, info in model.model_fields.items():
        key = f"{prefix}{info.alias or name}"
        nested = _model_of(info.annotation)
        doc = _doc(model, name)
        if nested is not None and nested is not Systems:
            section_doc = doc or " ".join((nested.__doc__ or "").split("\n\n")[0].split())
            section_doc = section_doc.replace("``", "`")
            yield key, "section", _default(info), section_doc
            yield from rows(nested, key + ".")
        elif nested is Systems:
            yield key, "section", "`{}`", "One section per system; a missing section is not deployed."
            yield from rows(nested, key + ".")
        else:
            yield key, _kind(info), _default(info), doc


def _kind(info: FieldInfo) -> str:
    """The field's type, naming the checked string kinds (schedule, time zone, region)."""
    for meta in info.metadata:
        if isinstance(meta, AfterValidator) and meta.func in CHECKED_KINDS:
            return CHECKED_KINDS[meta.func]
    return _type_name(info.annotation)


def render() -> str:
    lines = [
        f"Keys live under `{PROJECT}:` in `Pulumi.<stack>.yaml`. An unknown key or a wrong value",
        "stops the program before any resource is declared, with a message naming the key.",
        "A Scheduler expression follows EventBridge Scheduler's grammar (`rate(5 minutes)`,",
        "`cron(0 6 ? * MON *)` with six fields and one of the day fields `?`,",
        "`at(2026-01-31T09:00:00)`; [Schedule types](https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html));",
        "an IANA time zone is checked with zoneinfo (`Europe/London`, not `London`); an AWS region",
        "must be in botocore's partition data and offer every service its system needs there",
        "(SES email receiving for ler, Bedrock for ler, upsr and rrs, Scheduler for all but ls);",
        "a geographic inference profile (`eu.`, `us.`...) must be callable from the system's region.",
        "",
        "| key | type | default | meaning |",
        "|---|---|---|---|",
    ]
    for key, kind, default, doc in rows(StackConfig, ""):
        lines.append(f"| `{key}` | {kind} | {default} | {doc} |")
    return "\n".join(lines)


def main() -> int:
    print(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
