"""Review request sender (document 004): Lambda code of rrs-webhook, rrs-sender,
rrs-escalator, rrs-sync and rrs-sweep.

One module per function (``webhook``, ``sender``, ``escalator``, ``sync``, ``sweep``) holds the
``handler``; the decisions live in AWS-free modules beside them (``timing``, ``contacts``,
``gate``, ``grading``, ``drafting``, ``handover``, ``stragglers``), and AWS sits behind small
adapters (``store``, ``messaging``, ``scheduling``, ``work``, ``sheet``).
"""
