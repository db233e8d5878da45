"""The entry registry as the one reset: what each module keeps for a container's life is
declared with ``registry.keeps`` and forgotten by ``restart`` (and ``clear``)."""

from __future__ import annotations

import datetime as dt
import sys
import types
from collections.abc import Iterator

import pytest

from handlers.common import aws_clients, observability, secrets, settings
from handlers.common.entry import Registry, registry
from handlers.upsell_recommender import catalogue

NOON = dt.datetime(2026, 12, 7, 12, tzinfo=dt.UTC)


def _fill_every_cache() -> None:
    aws_clients.client("sqs")
    aws_clients.table("t")
    settings._cache[settings.Settings] = settings.Settings()
    observability._container["started"] = True
    secrets.default_cache._entries[("secret", "x")] = "kept"
    catalogue._snapshots["catalogue"] = (0.0, ())


def _kept() -> dict[str, int]:
    return {
        "clients": len(aws_clients._clients) + len(aws_clients._tables) + len(aws_clients._resources),
        "settings": len(settings._cache),
        "cold start": len(observability._container),
        "secrets": len(secrets.default_cache._entries),
        "catalogue": len(catalogue._snapshots),
    }


def test_restart_forgets_what_every_module_keeps_and_keeps_the_test_world() -> None:
    """A new container: the common modules' caches and upsr's catalogue snapshot are all
    forgotten; the moved clock stays (the test goes on in its world)."""
    registry.override(clock=lambda: NOON)
    _fill_every_cache()
    assert all(_kept().values()), _kept()
    registry.restart()
    assert _kept() == dict.fromkeys(_kept(), 0)
    assert registry.now() == NOON


def test_clear_forgets_the_caches_too_and_goes_back_to_the_real_time() -> None:
    registry.override(clock=lambda: NOON)
    _fill_every_cache()
    registry.clear()
    assert _kept() == dict.fromkeys(_kept(), 0)
    assert registry.now() != NOON


def test_every_cache_module_is_declared() -> None:
    assert registry.kept() == {
        "handlers.common.aws_clients": "reset_clients",
        "handlers.common.settings": "reset",
        "handlers.common.observability": "forget_cold_start",
        "handlers.common.secrets": "forget_all",
        "handlers.upsell_recommender.catalogue": "forget_snapshots",
    }


@pytest.fixture
def swapped() -> Iterator[tuple[types.ModuleType, types.ModuleType]]:
    """Two copies of one module, the second imported now (as the sandbox does)."""
    name = "tests_demo_kept_module"
    copies = []
    for _ in range(2):
        module = types.ModuleType(name)
        module.kept = ["something"]  # type: ignore[attr-defined]
        module.forget = module.kept.clear  # type: ignore[attr-defined]
        copies.append(module)
    sys.modules[name] = copies[1]
    yield copies[0], copies[1]
    sys.modules.pop(name, None)


def test_the_copy_imported_now_is_the_one_forgotten(
    swapped: tuple[types.ModuleType, types.ModuleType],
) -> None:
    before, now = swapped
    local = Registry()
    local.keeps(now.__name__, "forget")
    local.restart()
    assert now.kept == [] and before.kept == ["something"]
    sys.modules.pop(now.__name__)
    local.restart()  # a module not imported now keeps nothing to forget
