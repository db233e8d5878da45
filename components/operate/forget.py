"""``make forget`` and ``make export-person``: a person's data across the five systems, erased
or handed over.

``make forget STACK=<stack> EMAIL=… | PHONE=… | CUSTOMER=… | CONTACT=…`` finds everything each
enabled system holds about the person (every table item, every version of every object, dm's
undo bundles, rrs's audit; the stores are named in ``handlers/<system>/privacy.py``), erases it
and prints, per system, what it erased. ``DRY_RUN=1`` lists what it would erase and changes
nothing; running it twice erases nothing the second time. Where a system must still remember
the person (rrs's and upsr's opt-outs) it keeps only a salted hash, under the system's
``<system>-forget-salt`` secret, so they are not contacted again. ``make export-person`` prints
everything found as one JSON document (for a data-access request). Neither touches the CRM or
the shop: the owner erases there (docs/personal-data.md says how).

Names come from the offline plan's graph; ``--sandbox http://127.0.0.1:8700`` points the same
command at a running ``make sandbox`` (as ``make verify`` does).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from typing import Any

from components.offline.engine import Graph
from components.operate import no_credentials, plan_graph, stack_command
from components.operate.probing import Target
from components.operate.stack_secrets import StackSecret, has_value, secrets_in
from handlers.common.privacy import Held, Person, SystemStores, Table, Where, erase, exported, find

PACKAGES = {
    "dm": "duplicate_merger", "ler": "lead_enricher", "ls": "source_attributor",
    "upsr": "upsell_recommender", "rrs": "review_requests",
}
SALT = "forget-salt"
"""A system's salt secret is ``<system>-forget-salt``."""


def stores_of(system: str) -> SystemStores:
    stores: SystemStores = importlib.import_module(f"handlers.{PACKAGES[system]}.privacy").STORES
    return stores


def _bucket_name(graph: Graph, name: str) -> str:
    for bucket in graph.of_type("aws:s3/bucket:Bucket"):
        physical = bucket.physical_name or ""
        if physical == name or physical.startswith(name + "-"):
            return physical
    raise KeyError(f"no bucket {name} in the plan")


class Stack:
    """One stack's systems, reached on AWS or a sandbox."""

    def __init__(self, target: Target, graph: Graph) -> None:
        self.target = target
        self.graph = graph
        self.secrets: dict[str, StackSecret] = {s.name: s for s in secrets_in(graph)}

    def where(self, system: str) -> Where:
        region = str(self.graph.config.systems.enabled()[system].region)
        prefix = self.graph.config.prefix
        names = {
            s.seed: f"{prefix}-{s.seed}" if isinstance(s, Table) else _bucket_name(self.graph, f"{prefix}-{s.seed}")
            for s in stores_of(system).stores
        }
        return Where(
            names, self.target.client("dynamodb", region), self.target.client("s3", region), self._secret
        )

    def _secret(self, seed: str) -> str:
        return self.target.secret(self.secrets[seed])

    def salt(self, system: str) -> str | None:
        """The system's salt, when it has a salt secret holding a value."""
        secret = self.secrets.get(f"{system}-{SALT}")
        if secret is None or not has_value(self.target.client(secret.store, secret.region), secret):
            return None
        return self.target.secret(secret)

    def systems(self) -> list[str]:
        return list(self.graph.config.systems.enabled())


def forget(stack: Stack, person: Person, *, dry_run: bool) -> Iterator[tuple[str, list[Held], dict[str, int]]]:
    """Per enabled system: what it held, and per store how many records were erased (none on
    a dry run)."""
    for system in stack.systems():
        stores, where = stores_of(system), stack.where(system)
        held = find(stores, where, person)
        counts = {} if dry_run else erase(stores, where, person, held, stack.salt(system) if stores.remember else None)
        yield system, held, counts


def export(stack: Stack, person: Person) -> dict[str, Any]:
    """Everything held about the person: ``{system: {store: [records]}}``."""
    return {system: exported(find(stores_of(system), stack.where(system), person)) for system in stack.systems()}


def _person(options: Any) -> Person:
    ids = [i for i in (options.customer, options.contact) if i]
    return Person.of(email=options.email, phone=options.phone, ids=ids)


def main(argv: list[str] | None = None) -> int:
    parser = stack_command(__doc__ or "")
    parser.add_argument("--sandbox", help="a running sandbox's control API, http://127.0.0.1:8700")
    parser.add_argument("--email")
    parser.add_argument("--phone", help="international (+44…) or national in the UK")
    parser.add_argument("--customer", help="the shop's customer id")
    parser.add_argument("--contact", help="the CRM's contact id")
    parser.add_argument("--dry-run", action="store_true", help="list what would be erased; change nothing")
    parser.add_argument("--export", action="store_true", help="print everything held as one JSON document")
    options = parser.parse_args(argv)
    try:
        person = _person(options)
    except ValueError as err:
        target = "export-person" if options.export else "forget"
        print(f"make {target}: {err}: make {target} STACK=dev EMAIL=… (or PHONE=…, CUSTOMER=<shop "
              "customer id>, CONTACT=<CRM contact id>)", file=sys.stderr)
        return 2
    if not options.sandbox and no_credentials("export-person" if options.export else "forget"):
        return 2
    graph = plan_graph(options.stack)
    if graph is None:
        return 2
    stack = Stack(Target(graph, options.sandbox), graph)
    if options.export:
        print(json.dumps(export(stack, person), indent=2, sort_keys=True))
        return 0
    for system, held, counts in forget(stack, person, dry_run=options.dry_run):
        if not held:
            print(f"{system:<5} nothing held")
            continue
        if options.dry_run:
            print(f"{system:<5} would erase {len(held)}:")
            for h in held:
                print(f"        {h.store}: {h.describe()}")
        else:
            print(f"{system:<5} erased " + ", ".join(f"{store} {n}" for store, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
