"""Lambda code: ``handlers.common`` plus one package per system, one module per function."""
