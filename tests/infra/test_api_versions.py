"""External API versions: defaults, support windows, and the warning (never an error).

Shopify: "About Shopify API versioning" (shopify.dev/docs/api/usage/versioning): a version every
quarter, on the 1st of January, April, July and October; each supported for at least 12
months. PDL and Apollo publish no sunset for v5 / v1.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from components.config import (
    ConfigError,
    LerSettings,
    StackConfig,
    UpsrSettings,
    api_version_warnings,
    parse,
)
from components.offline import plan
from components.offline.engine import Graph, stack_config_values
from handlers.common import api_versions

TODAY = dt.date(2026, 12, 1)


def _raw(stack: str = "dev", **systems: dict[str, object]) -> dict[str, Any]:
    values = stack_config_values(stack)
    raw: dict[str, Any] = {
        k.split(":", 1)[1]: json.loads(v) if v[:1] in "{[0123456789" else v
        for k, v in values.items()
        if k.startswith("crm-automations:")
    }
    for name, changes in systems.items():
        raw["systems"][name].update(changes)
    return raw


def test_the_default_is_shopifys_current_stable_version_on_the_day() -> None:
    assert api_versions.shopify_current(TODAY) == "2026-10"
    assert UpsrSettings.model_fields["shopify_api_version"].default == "2026-10"
    assert api_versions.shopify_supported_until("2026-10") == dt.date(2027, 10, 1)
    assert api_versions.shopify_current(dt.date(2027, 1, 1)) == "2027-01"


@pytest.mark.parametrize(
    ("version", "warned"),
    [
        ("2025-07", "left Shopify's 12-month support window on 2026-07-01"),
        ("2025-10", "left Shopify's 12-month support window on 2026-10-01"),
        ("2026-01", None),  # supported until 2027-01-01
        ("2026-10", None),
        ("2027-01", "not released yet"),
    ],
)
def test_shopify_versions_outside_the_window_are_warned(version: str, warned: str | None) -> None:
    message = api_versions.shopify_warning(version, TODAY)
    if warned is None:
        assert message is None
    else:
        assert message is not None and warned in message
        assert "systems.upsr.shopifyApiVersion" in message


def test_stack_config_with_an_old_version_validates_and_warns() -> None:
    config = parse(_raw(upsr={"shopifyApiVersion": "2025-07"}))  # accepted: not an error
    [warning] = api_version_warnings(config, TODAY)
    assert "2025-07" in warning and "Move to 2026-10" in warning


def test_both_stacks_as_shipped_have_no_warnings() -> None:
    for stack in ("dev", "prod"):
        config = parse(_raw(stack))
        assert api_version_warnings(config, TODAY) == [], stack


def test_enrichment_provider_version_and_url_come_from_config_or_defaults() -> None:
    config = parse(_raw(ler={"enrichmentProvider": "apollo"}))
    ler = config.systems.ler
    assert ler is not None
    assert (ler.enrichment_url, ler.enrichment_version) == ("https://api.apollo.io", "v1")
    config = parse(_raw(ler={"enrichmentApiVersion": "v4"}))
    [warning] = api_version_warnings(config, TODAY)
    assert "enrichmentApiVersion v4" in warning and "pdl" in warning


def test_clearbit_is_refused_with_a_reason_and_an_unknown_provider_by_name() -> None:
    with pytest.raises(ConfigError, match="issues no new keys") as err:
        parse(_raw(ler={"enrichmentBaseUrl": "https://company.clearbit.com"}))
    assert "systems.ler" in str(err.value)
    with pytest.raises(ConfigError, match="enrichmentProvider"):
        parse(_raw(ler={"enrichmentProvider": "clearbit"}))
    assert LerSettings.model_fields["enrichment_provider"].default == "pdl"


def test_the_plan_prints_the_windows_and_warns_without_failing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config: StackConfig = parse(_raw(upsr={"shopifyApiVersion": "2025-07"}))
    empty = Graph(stack="dev", config=config, resources=[], outputs={})
    monkeypatch.setattr(plan, "run", lambda stack: empty)

    class Clean:  # the two-stack check has its own tests; here only the version lines matter
        ok = True

        def lines(self) -> list[str]:
            return ["two-stack check: skipped in this test"]

    monkeypatch.setattr(plan, "check_project", lambda built: Clean())
    assert plan.main(["--stack", "dev"]) == 0
    out = capsys.readouterr().out
    assert "external API: upsr Shopify Admin API: 2025-07 (supported 2025-07-01" in out
    assert "external API: ler enrichment: pdl v5 at https://api.peopledatalabs.com" in out
    assert "warning: systems.upsr.shopifyApiVersion 2025-07 left" in out


def test_the_functions_receive_the_provider_and_versions_they_call() -> None:
    from components.offline.engine import run
    from tests.infra.graph_helpers import functions, only_system

    graph = run("dev", {"systems": only_system("ler", enrichmentProvider="apollo")})
    env = functions(graph)["dev-ler-enrich"].inputs["environment"]["variables"]
    assert (
        env["ENRICHMENT_PROVIDER"],
        env["ENRICHMENT_BASE_URL"],
        env["ENRICHMENT_API_VERSION"],
    ) == (
        "apollo",
        "https://api.apollo.io",
        "v1",
    )
    graph = run("dev", {"systems": only_system("upsr")})
    env = functions(graph)["dev-upsr-catalog-sync"].inputs["environment"]["variables"]
    assert env["SHOPIFY_API_VERSION"] == "2026-10"


def test_one_place_holds_every_external_api_version() -> None:
    """Handlers and infra read their defaults from handlers/common/api_versions.py."""
    from handlers.lead_enricher.providers import apollo, pdl
    from handlers.lead_enricher.providers import base as firmographics
    from handlers.upsell_recommender import shopify

    assert shopify.DEFAULT_API_VERSION == api_versions.SHOPIFY_DEFAULT_VERSION == "2026-10"
    assert UpsrSettings.model_fields["shopify_api_version"].default == "2026-10"
    assert pdl.PdlCompanyEnrichment.default_version == api_versions.ENRICHMENT_APIS["pdl"].version == "v5"
    assert apollo.ApolloOrganizationEnrichment.default_version == api_versions.ENRICHMENT_APIS["apollo"].version
    assert {k: (d.base_url, d.api_version) for k, d in firmographics.DEFAULTS.items()} == {
        k: (a.base_url, a.version) for k, a in api_versions.ENRICHMENT_APIS.items()
    }
    assert StackConfig.model_fields["hubspot_api_version"].default == "2026-09"
    assert api_versions.HUBSPOT_DEFAULT_VERSION == "2026-09"


def test_the_version_module_ships_without_pulumi_or_the_infra() -> None:
    """It is in every function archive: importing it loads only the standard library."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = (
        f"import sys; sys.path.insert(0, {str(root)!r}); import handlers.common.api_versions; "
        "print(sorted(m.split('.')[0] for m in sys.modules "
        "if m.split('.')[0] in {'pulumi', 'pulumi_aws', 'components', 'pydantic', 'boto3', 'botocore'}))"
    )
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
