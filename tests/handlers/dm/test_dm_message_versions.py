"""dm-score reads the block messages of the previous release (0.1.0 wrote version 7).

The fixture was written by 0.1.0's own ``encode_messages`` (commit 37ebbbf) with the pairs its
``score_message`` kept: read by this code, the message yields exactly those pairs, blocked by
the same keys (the employer key 8 added is empty in it, so no pair moves to another block).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from handlers.duplicate_merger.matcher import KEY_NAMES, Thresholds
from handlers.duplicate_merger.pipeline import (
    MESSAGE_VERSION,
    MessageError,
    decode_message,
    score_message,
)

V7: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "block_message_v7.json").read_text())
THRESHOLDS = Thresholds(automatic=8.0, propose=2.0)


def test_a_version_7_message_scores_the_pairs_0_1_0_scored() -> None:
    (body,) = V7["bodies"]
    assert json.loads(body)["v"] == 7 == MESSAGE_VERSION - 1
    message = decode_message(body)
    assert all(len(k) == len(KEY_NAMES) and k[-1] == "" for k in message.keys)
    scored = score_message(message, THRESHOLDS)
    assert [[p.scored.pair_key, list(p.blocked_by)] for p in scored.pairs] == V7["pairs"]


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: {**d, "v": 6},                                            # older: not read
        lambda d: {**d, "v": 9},                                            # newer: not read
        lambda d: {**d, "v": True},
        lambda d: {**d, "keys": [[*k, ""] for k in d["keys"]]},             # v8 rows in a v7
        lambda d: {**d, "blocks": [{**d["blocks"][0], "k": "employer"}]},   # no such key in 7
    ],
)
def test_other_versions_and_mixed_shapes_are_refused(edit: Any) -> None:
    data = json.loads(V7["bodies"][0])
    with pytest.raises(MessageError):
        decode_message(json.dumps(edit(data)))
