"""The lead enricher's entry points: one module per function of document 001, each ``handler``.

``ler-junk-writer`` runs ``junk_writer.handler`` (components/systems/function_factory.py). Each
reads its settings record (``contract.<Function>Settings``), builds its collaborators once per
container and calls the logic, which lives in the concept modules of the package.
"""
