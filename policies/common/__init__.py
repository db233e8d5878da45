"""Helpers shared by the rules: properties, IAM data, documents, the stack index, config."""
