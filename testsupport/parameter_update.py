"""`pulumi up` of one ``aws:ssm/parameter:Parameter``, as the engine and the provider do it.

No Pulumi CLI runs in the tests, so this replays, against moto, the two steps an update goes
through, each as its source says:

- the engine keeps every ``ignoreChanges`` input at its value in state, so the provider sees no
  change there (https://www.pulumi.com/docs/iac/concepts/options/ignorechanges/: "Pulumi ignores
  a property by using the old value from the state");
- the provider's ``resourceParameterCreate`` / ``resourceParameterUpdate``
  (:data:`PROVIDER_SOURCE`): an update sends PutParameter (``Overwrite``) when any input but
  ``tags`` and ``overwrite`` changed; its ``Value`` is ``value_wo`` when ``value_wo_version``
  changed and otherwise the value in state, which ``resourceParameterRead`` clears for a
  write-only parameter; ``Description`` only when it changed; tags go through their own calls.

A test double: it lives outside ``handlers`` and never ships.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

PROVIDER_SOURCE: Final = (
    "https://github.com/hashicorp/terraform-provider-aws/blob/"
    "0073593e7d6993ba482409f4dc35438daaa79bb3/internal/service/ssm/parameter.go"
)
NO_PUT: Final = frozenset({"overwrite", "tags", "tagsAll"})
"""Inputs whose change alone sends no PutParameter (``d.HasChangesExcept`` in the update)."""


def plain(value: Any) -> Any:
    """An input as the provider reads it: a secret (``valueWo``) unwrapped."""
    return value["value"] if isinstance(value, dict) and "value" in value and len(value) == 2 else value


def goal(state: Mapping[str, Any], program: Mapping[str, Any], ignore_changes: list[str]) -> dict[str, Any]:
    """The inputs the engine hands the provider: the program's, ignored ones from state."""
    found = dict(program)
    for key in ignore_changes:
        if key in state:
            found[key] = state[key]
    return found


def create(client: Any, inputs: Mapping[str, Any]) -> None:
    """``resourceParameterCreate``: the first PutParameter, tags included."""
    client.put_parameter(
        Name=inputs["name"],
        Type=inputs["type"],
        Value=plain(inputs.get("valueWo")) or plain(inputs.get("value")) or "",
        Description=inputs.get("description", ""),
        Tier=inputs.get("tier", "Standard"),
        Tags=[{"Key": k, "Value": v} for k, v in sorted((inputs.get("tags") or {}).items())],
        Overwrite=False,
    )


def update(client: Any, state: Mapping[str, Any], inputs: Mapping[str, Any]) -> list[str]:
    """``resourceParameterUpdate`` from ``state`` to ``inputs``; the calls it made."""
    changed = {k for k in set(state) | set(inputs) if plain(state.get(k)) != plain(inputs.get(k))}
    calls = []
    name = inputs["name"]
    if changed - NO_PUT:
        value = ""  # what state holds for a write-only parameter (resourceParameterRead)
        if "valueWoVersion" in changed:
            value = plain(inputs.get("valueWo")) or value
        put: dict[str, Any] = {
            "Name": name,
            "Type": inputs["type"],
            "Value": value,
            "Overwrite": True,
            "Tier": inputs.get("tier", "Standard"),
            "AllowedPattern": inputs.get("allowedPattern", ""),
        }
        if "description" in changed:
            put["Description"] = inputs.get("description", "")
        client.put_parameter(**put)
        calls.append("PutParameter")
    if "tags" in changed:
        before, after = state.get("tags") or {}, inputs.get("tags") or {}
        if gone := sorted(set(before) - set(after)):
            client.remove_tags_from_resource(ResourceType="Parameter", ResourceId=name, TagKeys=gone)
            calls.append("RemoveTagsFromResource")
        if new := {k: v for k, v in after.items() if before.get(k) != v}:
            client.add_tags_to_resource(
                ResourceType="Parameter",
                ResourceId=name,
                Tags=[{"Key": k, "Value": v} for k, v in sorted(new.items())],
            )
            calls.append("AddTagsToResource")
    return calls
