"""The building blocks as a Pulumi component package (``crm``), for programs in other languages.

``PulumiPlugin.yaml`` and ``__main__.py`` make this folder a plugin that
``pulumi package add`` consumes; ``blocks.py`` holds the analyzer-readable front doors.
"""
