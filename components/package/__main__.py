"""Entry point of the ``crm`` component package: hosts the blocks for other languages.

The language host runs this folder as the plugin's program; the blocks live in this repository's
``components`` package, two folders up, so the repository root goes first on ``sys.path``.
The schema is inferred from ``blocks.py``'s argument and output annotations.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pulumi.provider.experimental import component_provider_host

from components.package.blocks import COMPONENTS, PACKAGE

if __name__ == "__main__":
    component_provider_host(COMPONENTS, name=PACKAGE, version="0.1.0")
