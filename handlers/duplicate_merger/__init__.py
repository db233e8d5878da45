"""Duplicate contact merger (document 000): dm-block, dm-score and dm-merge.

The matcher (``normalize``, ``phonetic``, ``similarity``, ``profile``, ``blocking``,
``evidence``, ``pipeline``) is plain Python without AWS; ``crm``, ``store`` and ``digest`` are the
adapters; ``block``, ``score`` and ``merge`` are the Lambda entry points.
"""
