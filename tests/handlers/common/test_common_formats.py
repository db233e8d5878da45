"""One format version rule for every message: none is 0.1.0's (1), newer or odd is refused."""

from __future__ import annotations

from typing import Any

import pytest

from handlers.common import formats
from handlers.common.batch import Unusable


def test_a_stamped_message_reads_as_its_version_and_keeps_its_fields() -> None:
    body = formats.stamp({"kind": "send", "request_id": "rq-1"}, 2)
    assert body == {"kind": "send", "request_id": "rq-1", "v": 2}
    assert formats.read(body, current=2, what="send message") == 2


def test_a_message_without_a_version_is_0_1_0s_version_1() -> None:
    assert formats.read({"pair_key": "a#b"}, current=3, what="merge request") == 1


def test_an_older_version_the_reader_knows_is_read() -> None:
    assert formats.read({"v": 1}, current=2, what="merge request") == 1


@pytest.mark.parametrize("data", [{"v": 3}, {"v": 0}, {"v": "2"}, {"v": True}, {"v": 2.0}, [], "x"])
def test_a_newer_unknown_or_malformed_version_is_refused(data: Any) -> None:
    with pytest.raises(Unusable, match="merge request"):
        formats.read(data, current=2, what="merge request")


def test_a_kind_may_keep_the_key_it_had_since_0_1_0() -> None:
    body = formats.stamp({"order_id": "1"}, 1, key="version")
    assert formats.read(body, current=1, what="suggest job", key="version") == 1
    with pytest.raises(Unusable, match="version 2 is not read here"):
        formats.read({"version": 2}, current=1, what="suggest job", key="version")
