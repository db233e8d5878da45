"""``pulumi up`` in bootstrap/: the pipeline's OIDC provider, roles and boundary (program.py)."""

import sys
from pathlib import Path

import pulumi

# Pulumi runs this file from bootstrap/; the packages it imports live at the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bootstrap.program import build

for key, value in build().items():
    pulumi.export(key, value)
