"""dm's Lambda entry points, one module per function of the document: block, score, merge."""
