"""``make verify STACK=<stack>``: after `pulumi up`, does each system work, past authentication?

Per system, first every secret it reads must hold a value (DescribeSecret or
DescribeParameters: metadata, no value read), then one synthetic request, signed with the
stack's own secret exactly as the real sender signs and marked ``x-crm-check``
(``handlers.common.function_url.CHECK_HEADER``), goes through the real Function URL, the real
authenticity check and parsing, and the real writes. The mark is read only after the request
proved authentic: it skips no check (every probe first sends a forged one, with the mark, and
expects it refused), it only holds the outside world back. What each system's check touches,
and removes (in ``finally``, also when the check failed part way), its probe says:
``components/operate/probes/<system>.py``.

Names come from the offline plan's graph; Function URLs from Lambda GetFunctionUrlConfig.
``--sandbox http://127.0.0.1:8700`` points the same command at a running ``make sandbox`` (its
control API lists the local URLs and the AWS emulator), which is how the tests run it.
Prints ``ok`` or ``failed: <reason>`` per system; exits 1 if any failed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterator

from components.offline.engine import Graph
from components.operate import no_credentials, plan_graph, stack_command
from components.operate.probes import dm, ler, ls, rrs, upsr
from components.operate.probing import WAIT_S, Context, Failed, Target
from components.operate.stack_secrets import has_value, secrets_in

PROBES: dict[str, Callable[[Context], str]] = {
    "dm": dm.probe, "ler": ler.probe, "ls": ls.probe, "upsr": upsr.probe, "rrs": rrs.probe,
}


def _unset(c: Context, system: str) -> list[str]:
    empty = []
    for s in c.secrets.values():
        if s.system != system:
            continue
        if not has_value(c.target.client(s.store, s.region), s):
            empty.append(s.physical)
    return empty


def verify(
    target: Target, graph: Graph, only: Collection[str] = (), wait_s: float = WAIT_S
) -> Iterator[tuple[str, bool, str]]:
    """(system, ok, what was seen or why it failed) per enabled system (those in ``only``)."""
    context = Context(target, graph, {s.name: s for s in secrets_in(graph)}, wait_s)
    for system in graph.config.systems.enabled():
        if only and system not in only:
            continue
        try:
            empty = _unset(context, system)
            if empty:
                yield system, False, f"secrets without a value: {', '.join(empty)} (make secrets)"
                continue
            yield system, True, PROBES[system](context)
        except Failed as err:
            yield system, False, str(err)
        except Exception as err:  # an unreachable URL, a denied call: named, not a traceback
            yield system, False, f"{type(err).__name__}: {err}"


def main(argv: list[str] | None = None) -> int:
    parser = stack_command(__doc__ or "")
    parser.add_argument("--sandbox", help="a running sandbox's control API, http://127.0.0.1:8700")
    parser.add_argument("--system", action="append", choices=sorted(PROBES), default=[],
                        help="check only this system (repeatable); all enabled ones by default")
    parser.add_argument("--wait", type=float, default=WAIT_S, metavar="SECONDS",
                        help=f"how long ler's check lead may take to reach ler-push (default {WAIT_S:g})")
    options = parser.parse_args(argv)
    if not options.sandbox and no_credentials("verify"):
        return 2
    graph = plan_graph(options.stack)
    if graph is None:
        return 2
    results = list(verify(Target(graph, options.sandbox), graph, options.system, options.wait))
    for system, ok, detail in results:
        print(f"{system:<5} {'ok' if ok else 'failed'}: {detail}")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
