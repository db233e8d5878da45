"""The cold first-invocation prediction and the INIT billing arithmetic
(components/offline/cold_start.py), on figures chosen to be checked by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.offline import cold_start
from components.offline.cold_start import Call, Latencies

WAITS = Latencies(
    calls={"dynamodb": 8.0, "dynamodb.TransactWriteItems": 20.0, "ssm": 25.0},
    connect_ms=30.0,
    outside_ms=300.0,
    default_ms=50.0,
)


def test_cpu_is_scaled_by_the_memorys_share_of_a_vcpu_and_never_sped_up() -> None:
    assert cold_start.cpu_share(1769) == 1.0
    assert cold_start.cpu_share(3538) == 1.0  # one thread: more than a vCPU does not help
    assert cold_start.at_memory(100.0, 512) == pytest.approx(100 * 1769 / 512)
    assert cold_start.at_memory(100.0, 10240) == 100.0
    with pytest.raises(ValueError, match="memory_mb"):
        cold_start.cpu_share(0)


def test_a_first_invocation_adds_each_call_one_connection_per_client_and_outside_calls() -> None:
    calls = [
        Call("ssm", "GetParameter", client=1),
        Call("dynamodb", "GetItem", client=2),
        Call("dynamodb", "PutItem", client=2),
        Call("dynamodb", "TransactWriteItems", client=3),
        Call("scheduler", "CreateSchedule", client=4),  # not in the file: the default
    ]
    p = cold_start.predict(354.0, 512, calls, outside_calls=1, latencies=WAITS)
    assert p.cpu_ms == pytest.approx(354 * 1769 / 512)  # 1,223.1 ms
    assert p.aws_ms == 25 + 8 + 8 + 20 + 50
    assert (p.calls, p.connections) == (5, 5)  # four clients and one outside host
    assert p.connect_ms == 5 * 30
    assert p.outside_ms == 300
    assert p.total_ms == pytest.approx(1223.09 + 111 + 150 + 300, abs=0.01)
    assert p.over_target
    assert not cold_start.predict(354.0, 1769, calls[:1], 0, WAITS).over_target  # 354+25+30


def test_the_summary_counts_calls_in_the_order_they_were_first_made() -> None:
    calls = [Call("ssm", "GetParameter"), Call("dynamodb", "GetItem"), Call("dynamodb", "GetItem")]
    assert cold_start.summary(calls) == "ssm.GetParameter, dynamodb.GetItem x2"
    assert cold_start.summary([]) == "-"


def test_init_gb_seconds_is_the_import_at_the_memory_billed_at_the_memory() -> None:
    # 1,000 cold starts of a 100 ms import at 512 MB: 0.3455 s each at 0.5 GB
    assert cold_start.init_gb_seconds(100.0, 512, 1000) == pytest.approx(1000 * 0.1 * 1769 / 512 * 0.5)
    # above a vCPU the import is no faster, and the memory costs more
    assert cold_start.init_gb_seconds(100.0, 3538, 1000) == pytest.approx(1000 * 0.1 * 3538 / 1024)


def test_the_shipped_latency_file_gives_every_figure_a_source() -> None:
    import yaml

    data = yaml.safe_load(cold_start.LATENCIES.read_text())
    entries = [*data["calls"].values(), data["connect"], data["outside_https"], data["default"]]
    assert all(e["ms"] > 0 and len(e["source"]) > 10 for e in entries)
    found = cold_start.load_latencies()
    assert found.call_ms("dynamodb", "GetItem") == data["calls"]["dynamodb"]["ms"]
    assert found.call_ms("no-such-service", "Op") == found.default_ms


def test_cold_start_figures_round_trip_and_a_bad_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "cold_starts.yaml"
    cold_start.write_cold_starts({"upsr-order": 123.456, "ls-capture": 60.0}, "a note", path)
    assert cold_start.load_cold_starts(path) == {"ls-capture": 60.0, "upsr-order": 123.5}
    assert "bench_init.py --record" in path.read_text()
    assert cold_start.load_cold_starts(tmp_path / "absent.yaml") == {}
    path.write_text("import_cpu_ms: {upsr-order: fast}\n")
    with pytest.raises(cold_start.ColdStartError, match=r"cold_starts\.yaml"):
        cold_start.load_cold_starts(path)
