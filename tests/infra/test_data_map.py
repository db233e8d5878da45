"""The data map (issue 42): every store of both stacks says what it holds about people, each
retention names a real config key with the stack's value, and a store added without its
declaration is found."""

from __future__ import annotations

import dataclasses

import pytest

from components.config import RrsSettings, StackConfig
from components.config_reference import rows
from components.offline import data_map
from components.offline.engine import Graph
from components.operate.forget import PACKAGES, stores_of
from components.personal_data import FORGET, PersonalData, Retention, component_inputs, tag_value
from testsupport.graphs import GraphCache

STACKS = ("dev", "prod")


@pytest.mark.parametrize("stack", STACKS)
def test_every_store_of_the_stack_declares_what_it_holds(graphs: GraphCache, stack: str) -> None:
    graph = graphs.program(stack)
    found = data_map.entries(graph)
    assert {e.kind for e in found} == {"table", "bucket", "queue", "log group"}
    assert data_map.missing(graph) == []


def _without_declaration(graph: Graph, store_name: str) -> Graph:
    """The graph with one store's component stripped of its declaration (a store added
    without one)."""
    table = next(r for r in graph.resources if r.physical_name == store_name)
    assert table.parent is not None
    component = graph.by_urn(table.parent)
    stripped = dataclasses.replace(component, inputs={})
    return dataclasses.replace(
        graph, resources=[stripped if r is component else r for r in graph.resources]
    )


def test_a_store_without_a_declaration_is_named(graphs: GraphCache) -> None:
    graph = _without_declaration(graphs.program("dev"), "dev-rrs-audit")
    assert data_map.missing(graph) == ["dev: table rrs-audit declares nothing about personal data"]
    with pytest.raises(ValueError, match="rrs-audit declares nothing"):
        data_map.render([graph])


@pytest.mark.parametrize("stack", STACKS)
def test_each_retention_names_a_config_key_holding_the_stacks_value(
    graphs: GraphCache, stack: str
) -> None:
    graph = graphs.program(stack)
    keys = {key for key, *_ in rows(StackConfig, "")}
    checked = 0
    for entry in data_map.entries(graph):
        retention = (entry.declared or {}).get("retention")
        if not retention or not retention["key"]:
            continue
        assert retention["key"] in keys, entry
        _, system, field = retention["key"].split(".")
        settings = getattr(graph.config.systems, system)
        value = next(getattr(settings, n) for n, f in type(settings).model_fields.items()
                     if (f.alias or n) == field)
        assert retention["days"] == value, entry
        checked += 1
    assert checked >= 17  # the tables and buckets of the five systems


@pytest.mark.parametrize("stack", STACKS)
def test_every_personal_data_store_has_an_end_in_the_graph(graphs: GraphCache, stack: str) -> None:
    held = [e for e in data_map.entries(graphs.program(stack)) if e.declared and e.declared["kind"] == "held"]
    assert held and [e.name for e in held if not e.ends] == []


def test_the_stores_the_issue_names_are_all_mapped(graphs: GraphCache) -> None:
    names = {e.name: e.declared for e in data_map.entries(graphs.program("dev"))}
    for store in ("dm-pairs", "dm-merges", "dm-undo", "ler-raw", "ler-records", "ler-junk",
                  "ler-identity", "ls-touches", "ls-identities", "ls-enquiries", "upsr-customers",
                  "upsr-orders", "upsr-offers", "rrs-customers", "rrs-jobs", "rrs-requests",
                  "rrs-audit"):
        declared = names[store]
        assert declared is not None and declared["kind"] == "held", store
    optout = names["rrs-optout"]
    assert optout is not None and optout["kind"] == "suppression"


def test_a_declaration_is_recorded_and_tagged() -> None:
    settings = RrsSettings.model_validate(
        {"senderEmail": "a@example.com", "ownerEmail": "o@example.com",
         "smsOriginationIdentity": "pool/p1", "reviewUrl": "https://r.example.com",
         "feedbackUrl": "https://f.example.com"}
    )
    retention = Retention.setting("rrs", settings, "retention_days", "a year of asks")
    assert (retention.days, retention.key) == (400, "systems.rrs.retentionDays")
    with pytest.raises(ValueError, match="no setting business_name in days"):
        Retention.setting("rrs", settings, "business_name", "not days")
    held = PersonalData(("email addresses",), "to ask", retention)
    assert tag_value(held) == "held"
    assert component_inputs(held) == {
        "personalData": {
            "kind": "held",
            "fields": ["email addresses"],
            "why": "to ask",
            "onRequest": "make forget erases the person's items",
            "retention": {"days": 400, "key": "systems.rrs.retentionDays", "why": "a year of asks"},
        }
    }
    with pytest.raises(ValueError, match="names its fields"):
        PersonalData((), "to ask", retention)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_store_the_map_says_make_forget_erases_is_in_forgets_list(
    graphs: GraphCache, stack: str
) -> None:
    """The map's promise and make forget's reach are one list: a table or bucket declared as
    erased by ``make forget`` is one of its system's stores in ``handlers/<system>/privacy.py``."""
    promised = {
        (e.system, e.name)
        for e in data_map.entries(graphs.program(stack))
        if e.kind in ("table", "bucket") and e.declared and e.declared.get("onRequest") == FORGET
    }
    assert promised
    reached = {
        (system, store.seed) for system in PACKAGES for store in stores_of(system).stores
    }
    assert sorted(promised - reached) == []
