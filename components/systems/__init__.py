"""The five systems. Each is one ComponentResource built from the blocks in ``components``.

``SYSTEMS`` maps the config key of a system to its module and class; only enabled systems are
imported, so a system's code runs only when its stack deploys it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

SYSTEMS: dict[str, tuple[str, str]] = {
    "dm": ("components.systems.duplicate_merger", "DuplicateMerger"),
    "ler": ("components.systems.lead_enricher", "LeadEnricher"),
    "ls": ("components.systems.source_attributor", "SourceAttributor"),
    "upsr": ("components.systems.upsell_recommender", "UpsellRecommender"),
    "rrs": ("components.systems.review_requests", "ReviewRequests"),
}


@dataclass(frozen=True)
class SystemEntry:
    key: str
    module: str
    class_name: str

    def load(self) -> type:
        module = importlib.import_module(self.module)
        cls = getattr(module, self.class_name)
        assert isinstance(cls, type)
        return cls


def entry(key: str) -> SystemEntry:
    module, class_name = SYSTEMS[key]
    return SystemEntry(key, module, class_name)
