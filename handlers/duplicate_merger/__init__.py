"""Duplicate contact merger (document 000): dm-block, dm-score and dm-merge.

The matcher (``normalize``, ``similarity``, ``profile``, ``blocking``,
``evidence``, ``pipeline``) is plain Python without AWS; ``runs`` (the weekly run), ``scoring``
and ``review`` (the links, automatic merges, the digest) with ``merging`` are the work;
``crm``, ``store`` and ``digest`` are the adapters; ``contract`` holds the names and settings
the infra shares; ``functions/`` holds the Lambda entry points, one module per function.
"""
