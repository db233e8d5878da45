"""Session-wide settings for every test.

Compiled distributions (jellyfish) are vendored from the locked python3.14 arm64 wheel, which
the archive builder fetches from PyPI into build/wheels. Tests never need the network, so
archives built under pytest take compiled code from this environment instead
(``CRM_NATIVE_WHEELS=host``, still at the locked version). tests/test_wheels.py covers the
locked-wheel path with a wheel it builds itself.
"""

from __future__ import annotations

import os

os.environ["CRM_NATIVE_WHEELS"] = "host"
