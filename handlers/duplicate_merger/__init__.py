"""Duplicate contact merger (document 000): dm-block, dm-score and dm-merge.

The matcher (``normalize``, ``similarity``, ``profile``, ``blocking``, ``evidence``,
``pipeline``) is plain Python without AWS, and so are what it learns from this CRM: how often
fields agree across ``contexts`` of a life, which agreements ``dependence`` explains away, and
the reviewers' decisions that ``calibration`` turns into score bands. The work is ``reading``
(a portal read over several invocations), ``runs`` (the weekly run), ``scoring`` and
``review`` (the links, automatic merges, the digest) with ``merging``; ``pages`` is the HTML a
reviewer sees; ``crm``, ``store`` and ``digest`` are the adapters; ``contract`` holds the
names and settings the infra shares; ``functions/`` holds the Lambda entry points, one module
per function.
"""
