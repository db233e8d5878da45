"""The sandbox's service requests and the policy pack's deliveries come from one table."""

from __future__ import annotations

import pytest

from policies.common.service_access import DELIVERIES, ServiceDelivery, arn_covers
from sandbox import service_requests as sr

NAMES = {"bucket": "b", "rule_set": "rs", "rule": "r", "rule_path": "r", "budget": "bg", "alarm": "a"}


@pytest.mark.parametrize("row", DELIVERIES.values(), ids=lambda r: f"{r.principal}->{r.target}")
def test_the_sandbox_request_is_the_one_the_pack_expects(row: ServiceDelivery) -> None:
    names = {k: v for k, v in NAMES.items() if "{" + k + "}" in row.source}
    request = sr.delivery(row.principal, row.target, "arn:aws:x:::target", "eu-west-2", **names)
    assert request.principal == row.principal and request.action == row.action
    # The pack matches with an unknown region and account; the sandbox sends concrete ones.
    assert arn_covers(row.source_arn(**names), request.context["aws:SourceArn"])
    assert row.page.startswith("https://")


def test_the_named_requests_read_the_table() -> None:
    assert sr.s3_invokes("b", "fn").context["aws:SourceArn"] == "arn:aws:s3:::b"
    assert sr.events_sends(sr.rule_arn("eu-west-2", "r", "bus"), "q").action == "sqs:SendMessage"
    assert sr.rule_arn("eu-west-2", "r", "bus").endswith(":rule/bus/r")
    assert sr.budgets_publishes("bg", "t").context["aws:SourceArn"].endswith(":budget/bg")
