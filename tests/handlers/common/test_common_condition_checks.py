"""The one conditional-failure check, for single writes and for transactions."""

from __future__ import annotations

from typing import Any, cast

import pytest
from botocore.exceptions import ClientError

from handlers.common.transitions import condition_failed, old_item, transaction_condition_failed


def error(code: str, **extra: Any) -> ClientError:
    # botocore types the response as a closed TypedDict; a test adds the keys its case reads
    return ClientError(cast(Any, {"Error": {"Code": code, "Message": code}, **extra}), "PutItem")


def test_a_failed_condition_is_recognised_and_its_item_read() -> None:
    err = error("ConditionalCheckFailedException", Item={"pk": {"S": "a"}, "n": {"N": "2"}})
    assert condition_failed(err)
    assert old_item(err) == {"pk": "a", "n": 2}


@pytest.mark.parametrize("code", ["ProvisionedThroughputExceededException", "ValidationException"])
def test_other_errors_are_not_condition_failures(code: str) -> None:
    assert not condition_failed(error(code))
    assert not transaction_condition_failed(error(code))
    assert not condition_failed(ValueError("not a client error"))


def test_a_cancelled_transaction_names_which_condition_failed() -> None:
    err = error(
        "TransactionCanceledException",
        CancellationReasons=[{"Code": "None"}, {"Code": "ConditionalCheckFailed"}],
    )
    assert not transaction_condition_failed(err, 0)
    assert transaction_condition_failed(err, 1)
    assert transaction_condition_failed(err, None)
    assert not transaction_condition_failed(err, 5)


def test_a_transaction_cancelled_for_another_reason_is_not_a_lost_race() -> None:
    err = error(
        "TransactionCanceledException",
        CancellationReasons=[{"Code": "TransactionConflict"}, {"Code": "None"}],
    )
    assert not transaction_condition_failed(err, None)
