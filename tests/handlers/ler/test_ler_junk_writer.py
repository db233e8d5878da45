"""ler-junk-writer: one object per dropped lead, on moto."""

from __future__ import annotations

from handlers.lead_enricher.functions import junk_writer
from tests.handlers.ler.conftest import (
    JUNK_BUCKET,
    Ler,
    context,
    event,
    junk_lead,
)


def test_the_junk_writer_keeps_one_object_per_lead(ler: Ler) -> None:
    first = junk_writer.handler(event("le.junk", junk_lead("f-1", "spam_phrases")), context())
    again = junk_writer.handler(event("le.junk", junk_lead("f-1", "spam_phrases")), context())
    assert first == again == {"key": "junk/2026-11-27/f-1.json"}
    [entry] = ler.objects(JUNK_BUCKET, "junk/").values()
    assert (entry["reason"], entry["stage"], entry["lead"]["message"]) == (
        "spam_phrases",
        "filter",
        "Buy backlinks now",
    )
