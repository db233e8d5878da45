"""The local sandbox: the dev stack's data plane on a local AWS emulator, its handlers in-process.

``python -m sandbox demo`` plays a scripted day per enabled system; ``python -m sandbox serve``
leaves the environment running. See docs/sandbox.md.
"""
