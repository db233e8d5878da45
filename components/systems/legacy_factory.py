"""The previous FunctionFactory (module from an argument, `uses=` picking shared names): kept only until rrs and upsr move to components/systems/function_factory.py (#16); then deleted.

A system's functions share its handler package, the document's memory/timeout table and a set
of environment names (tables, queues, secrets); each function picks the shared names it reads
with ``uses``, so its environment holds nothing it does not use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi

from components.deployment import Deployment
from components.grants import Grant
from components.scoped_lambda import (
    FunctionCode,
    FunctionUrl,
    QueueTrigger,
    ScopedLambda,
    ScopedLambdaArgs,
)


@dataclass(frozen=True)
class FunctionFactory:
    """Declares ScopedLambdas for one system.

    Attributes:
        deployment: Where the functions live.
        package: The system's handler package, e.g. ``handlers.review_requests``.
        sizes: Memory (MB) and timeout (s) per function name, from the document.
        shared_env: Environment values several functions read, by variable name.
        opts: Options for every function (parented to the system component).
        vendored: Distributions every function of the system vendors (a module they all
            import needs them), on top of each function's own.
    """

    deployment: Deployment
    package: str
    sizes: Mapping[str, tuple[int, int]]
    shared_env: Mapping[str, pulumi.Input[str]]
    opts: pulumi.ResourceOptions
    vendored: tuple[str, ...] = ()

    def __call__(
        self,
        name: str,
        description: str,
        module: str,
        grants: tuple[Grant, ...],
        env: Mapping[str, pulumi.Input[str]],
        *,
        uses: tuple[str, ...],
        url: FunctionUrl | None = None,
        queues: tuple[QueueTrigger, ...] = (),
        vendored: tuple[str, ...] = (),
        invoked_async: bool = False,
    ) -> ScopedLambda:
        """One function of the document; ``uses`` picks the shared names it reads.

        ``invoked_async``: a schedule invokes it, so it gets an on-failure destination.
        """
        memory, timeout = self.sizes[name]
        return ScopedLambda(
            name,
            ScopedLambdaArgs(
                self.deployment,
                name,
                description,
                FunctionCode(
                    f"{self.package}.{module}.handler", vendored=(*self.vendored, *vendored)
                ),
                memory,
                timeout,
                grants=grants,
                environment={**{key: self.shared_env[key] for key in uses}, **env},
                url=url,
                queue_triggers=queues,
                invoked_async=invoked_async,
            ),
            self.opts,
        )
