"""The crm-automations CrossGuard policy pack.

``policies.pack.ALL_POLICIES`` holds the policy objects; ``policies/__main__.py`` serves them to
``pulumi preview --policy-pack policies``; ``policies.runner.evaluate`` runs the same objects
over a list of PolicyResources (the mock engine's graph) without the Pulumi CLI. Importing this
package never starts the analyzer.
"""
