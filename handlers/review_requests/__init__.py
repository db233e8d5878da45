"""Review request sender (document 004): Lambda code of rrs-webhook, rrs-sender,
rrs-escalator, rrs-sync and rrs-sweep.

``contract`` names what the infra and the handlers share (tables, queues, secrets, message
kinds, each function's settings). The entry points are ``functions/<function>.py``; the
decisions live in AWS-free modules (``timing``, ``contacts``, ``gate``, ``grading``,
``drafting``, ``handover``, ``stragglers``), the flows in ``intake``, ``sending`` and
``escalation``, and AWS sits behind small adapters (``store``, ``messaging``, ``scheduling``,
``work``, ``sheet``). Test doubles live in ``testsupport/rrs.py``, never here.
"""
