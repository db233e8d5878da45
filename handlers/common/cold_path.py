"""The measured cold-path weights: the only modules a handler imports after its module's top.

Everything in ``handlers/`` is imported at the top of its module, except the modules named in
:data:`WEIGHTS`. Each of them costs tens of milliseconds of CPU to import and is not needed
before a function's first answer on every path (a public surface refuses a bad request before
it makes an AWS client; only a batch function splits a batch; only some paths read a phone
number), so the code that needs one asks for it here, on first use::

    phonenumbers = cold_path.load("phonenumbers")

Lambda gives a function CPU in proportion to its memory (one vCPU at 1,769 MB), so 50 ms of
import at 256 MB is about 350 ms of a first invocation. ``tests/test_import_structure.py``
refuses any other function-local import, and ``components/archive.py`` counts each ``load`` as
an import when it decides what a function's archive vendors.

pydantic is imported at the top, but a handler's models defer building their validators to
their first use (``ConfigDict(defer_build=True)``): a refused request never pays for them, and
neither does INIT, which Lambda bills (``tests/handlers/common/test_common_imports.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Final

WEIGHTS: Final[Mapping[str, str]] = {
    # CPU of the import in a fresh interpreter that has already loaded the standard library
    # modules every handler uses and botocore.exceptions (median of 5; benchmarks/bench_init.py
    # measures the first invocations these choices give).
    "boto3": "93 ms: the SDK; made only when a function first calls AWS (aws_clients)",
    "boto3.dynamodb.conditions": "91 ms (imports boto3): key conditions of a query",
    "boto3.dynamodb.types": "91 ms (imports boto3): DynamoDB wire types",
    "botocore.config": "52 ms: client configuration, read with the first client",
    "aws_lambda_powertools.utilities.parameters": "121 ms (imports boto3): secrets",
    "aws_lambda_powertools.utilities.batch": "20 ms beyond the Logger: batch functions only",
    "phonenumbers": "36 ms: only the paths that read a phone number",
    "email_validator": "28 ms: only the paths that read an email address",
}
"""Module -> why it is loaded late (its measured import cost and when it is needed)."""


def load(name: str) -> ModuleType:
    """The module ``name``, imported on the first call (later calls find it in sys.modules).

    ``name`` must be one of :data:`WEIGHTS`: any other module is imported at the top.
    """
    if name not in WEIGHTS:
        raise LookupError(
            f"{name} is not a measured cold-path weight: import it at the top of its module"
        )
    return importlib.import_module(name)
