"""Entry points of the upsell recommender: one module per function of document 003."""
