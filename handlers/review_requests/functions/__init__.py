"""The entry points of rrs, one module per seed function (``rrs-webhook`` -> ``webhook``).

Each ``handler`` reads its settings record (``contract.<Function>Settings``), builds the
collaborators and calls the logic in the concept-named modules of ``handlers.review_requests``.
"""
