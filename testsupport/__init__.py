"""Test doubles and generators: never shipped (components/archive.py refuses them)."""
