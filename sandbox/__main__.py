"""``python -m sandbox demo`` (a scripted day per enabled system) and ``python -m sandbox
serve`` (the same environment, left running, with its local URLs printed)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="play a scripted day per enabled system")
    demo.add_argument("--systems", help="comma-separated keys (default: every enabled system)")
    demo.add_argument("--verbose", action="store_true", help="print handler tracebacks")
    demo.add_argument(
        "--messages", default="build/see/sandbox", help="folder for every mail and SMS sent"
    )
    serve = sub.add_parser("serve", help="start the environment and leave it running")
    serve.add_argument("--port", type=int, default=4566, help="the AWS emulator's port")
    serve.add_argument("--url-port", type=int, default=8701, help="first Function URL port")
    serve.add_argument("--scenarios", action="store_true", help="play the scripted days first")
    serve.add_argument("--control-port", type=int, default=8700, help="the control API's port")
    serve.add_argument(
        "--speed", type=float, default=1.0, help="run the sandbox clock this many times faster"
    )
    for command in (demo, serve):
        command.add_argument(
            "--enable",
            default="",
            help="comma-separated systems to enable for this run although Pulumi.dev.yaml does not",
        )
        command.add_argument(
            "--schedule-trust",
            choices=("program", "group", "schedule", "prefix"),
            default="program",
            help="scope every schedule role's trust in Scheduler to the schedule group, one "
            "schedule or a name prefix instead of what the program declares (schedule and "
            "prefix put issue 12's defect 2 back: Scheduler is refused)",
        )
    args = parser.parse_args(argv)

    started = time.monotonic()
    # the mock engine loads Pulumi and the program (seconds): only on this path
    from components.offline.program import program_graph

    print("running the Pulumi program on the mock engine (dev stack)...", flush=True)
    graph = program_graph("dev", _enabling(args.enable.split(",")) if args.enable else None)
    if args.schedule_trust != "program":
        # the CLI loads each command's modules when it runs (``--help`` stays quick)
        from sandbox.edits import with_schedule_trust

        graph = with_schedule_trust(graph, args.schedule_trust)
    if args.command == "demo":
        # the CLI loads each command's modules when it runs (``--help`` stays quick)
        from sandbox.play import demo as run_demo

        keys = args.systems.split(",") if args.systems else None
        results = run_demo(keys, graph=graph, verbose=args.verbose, messages_to=args.messages)
        print(f"total {time.monotonic() - started:.1f} s", flush=True)
        return 0 if results and all(r.ok for r in results) else 1
    return serve_forever(
        graph, args.port, args.url_port, args.scenarios, args.control_port, args.speed
    )


def _enabling(keys: list[str]) -> dict[str, object]:
    """The stack file's systems section with ``keys`` enabled too."""
    data = yaml.safe_load((Path(__file__).resolve().parents[1] / "Pulumi.dev.yaml").read_text())
    systems = dict(data["config"]["crm-automations:systems"])
    for key in keys:
        systems[key] = {**systems[key], "enabled": True}
    return {"systems": systems}


def serve_forever(
    graph: object, port: int, url_port: int, with_scenarios: bool, control_port: int, speed: float
) -> int:
    # the CLI loads each command's modules when it runs (``--help`` stays quick)
    from sandbox.core import Sandbox
    from sandbox.play import enabled_systems, play

    sb = Sandbox(graph, emulator_port=port, url_base_port=url_port)  # type: ignore[arg-type]
    sb.start()
    try:
        if with_scenarios:
            play(sb, enabled_systems(sb.graph))
        else:
            # the CLI loads each command's modules when it runs (``--help`` stays quick)
            from sandbox import scenarios

            for key in enabled_systems(sb.graph):
                scenario = scenarios.load(key)
                if scenario is not None:
                    scenario.prepare(sb)
            print("started with secrets and stand-ins only, no data: --scenarios (as `make sandbox`) plays each system's day first")
        sb.run_pump(speed=speed)
        # the CLI loads each command's modules when it runs (``--help`` stays quick)
        from sandbox.control import ControlServer

        control = ControlServer(sb, port=control_port)
        control.start()
        assert sb.emulator is not None
        print(
            f"\nAWS emulator: {sb.emulator.endpoint}  (aws --endpoint-url {sb.emulator.endpoint} ...,"
            " any access key, region per system)"
        )
        for name, server in sorted(sb.urls.items()):
            auth = sb.topology.functions[name].url_auth
            print(f"  {name:<28} {server.url}  ({auth})")
        for problem in sb.triggers.problems if sb.triggers else []:
            print(f"  wiring note: {problem}")
        print(
            f"control API: {control.url}  (GET / for the overview, /refusals; POST"
            " /schedules/<name>/fire, /clock/advance?hours=2, /budgets/notify)"
        )
        print("Ctrl-C stops.", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopping", flush=True)
    finally:
        sb.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
