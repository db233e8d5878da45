"""Lead enricher (document 001): intake, a five-stage chain on EventBridge, push, scheduled jobs.

The entry points are ``functions/<function>.py`` (one per function of the document, each with
``handler``); ``contract.py`` holds the names, tables and settings records the infrastructure
shares with them. The logic lives in concept modules beside them: ``lanes`` (intake),
``normalizing``, ``enriching``, ``deduping``, ``screening`` (the filter), ``pushing``,
``junk_log``, ``redrive`` (retry), ``backfilling``, ``junk_digest``, and the business rules
(``cleanup``, ``matching``, ``junk_signals``, ``crm_fields``...), which touch no AWS.
``make verify``'s check lead is a lead like any other, told apart by ``Lead.is_check`` alone:
every stage does its work, none lets it reach a person, a paid call (``enriching``,
``pushing``) or a business metric (``lead_metrics``), and ler-push notes its arrival
(``check_arrivals``). AWS and
external services sit behind small adapters and ports; the test doubles are in
``testsupport/ler.py``.
"""
