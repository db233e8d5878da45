"""One rule per module; each exposes ``NAME`` and ``POLICY`` and documents what, why and how to fix."""
