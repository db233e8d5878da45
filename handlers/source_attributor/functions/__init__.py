"""Entry points of the lead source attributor: one module per function of document 002."""
