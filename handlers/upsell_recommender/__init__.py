"""Upsell recommender (document 003): one fitting add-on per order, one nudge, one tap.

Handlers (one module each): ``order`` (Shopify webhook), ``picker`` (SQS suggest jobs, the only
model caller), ``sender`` (scheduled nudges), ``addlink`` (one-tap redirect), ``sweep``
(closes windows, owner roll-up), ``catalog_sync`` (Shopify product mirror). The business rules
live in AWS-free modules beside them (``gate``, ``picking``, ``nudges``, ``report``,
``shopify``); DynamoDB access is in ``offers``, ``customers`` and ``catalogue``.
"""
