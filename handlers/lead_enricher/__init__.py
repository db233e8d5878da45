"""Lead enricher (document 001): intake, a five-stage chain on EventBridge, push, scheduled jobs.

One module per function (``intake``, ``normalize``, ``enrich``, ``dedupe``, ``filter``,
``push``, ``junk_writer``, ``retry``, ``backfill``, ``digest``), each with ``handler``. The
business rules live in plain modules beside them (``cleanup``, ``matching``, ``junk_signals``,
``crm_fields``...) and touch no AWS; AWS and external services sit behind small adapters and
ports so tests swap them for moto and in-memory fakes.
"""
