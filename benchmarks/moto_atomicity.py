"""Is moto's DynamoDB atomic under concurrent requests? A measurement, not a test.

Run with ``.venv/bin/python benchmarks/moto_atomicity.py``. Every figure printed comes from a
run on this machine, now. Threads share one ``mock_aws`` world, as the race tests do.

1. First-writer-wins: N threads ``PutItem`` one key with ``attribute_not_exists``; DynamoDB
   lets exactly one win. Counted: trials where more than one thread was told it won.
2. ``TransactWriteItems`` rollback: one thread runs transactions that always cancel (their
   second condition fails) while another writes plain items to the same table. moto
   deep-copies the table before a transaction and restores the copy when it cancels, so a
   plain write landing in between is erased. DynamoDB never loses an acknowledged write.
   Counted: acknowledged plain writes missing at the end, and transactions that crashed
   inside moto (its deepcopy iterating a table another thread is writing).

Both are run without and with the race tests' ``atomic_dynamodb`` lock (one lock around
moto's DynamoDB request handler), which is what makes the race tests meaningful.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import boto3

os.environ.update(
    AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="eu-west-2"
)


def _table(client: Any, name: str) -> None:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def first_writer_wins(client: Any, trials: int, threads: int) -> int:
    doubles = 0
    for trial in range(trials):
        barrier = threading.Barrier(threads)
        wins: list[int] = []

        def put(
            worker: int, key: str = f"k{trial}", barrier: threading.Barrier = barrier,
            wins: list[int] = wins,
        ) -> None:
            barrier.wait()
            try:
                client.put_item(
                    TableName="fww", Item={"pk": {"S": key}, "w": {"N": str(worker)}},
                    ConditionExpression="attribute_not_exists(pk)",
                )
                wins.append(worker)
            except client.exceptions.ConditionalCheckFailedException:
                pass

        pool = [threading.Thread(target=put, args=(n,)) for n in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        doubles += len(wins) > 1
    return doubles


def rollback_erases(client: Any, writes: int) -> tuple[int, int]:
    """(acknowledged plain writes missing at the end, transactions that crashed inside moto)."""
    client.put_item(TableName="tx", Item={"pk": {"S": "guard"}})
    done = threading.Event()
    crashed = [0]

    def cancelling() -> None:
        n = 0
        while not done.is_set():
            n += 1
            try:
                client.transact_write_items(TransactItems=[
                    {"Put": {"TableName": "tx", "Item": {"pk": {"S": f"tx{n}"}}}},
                    {"ConditionCheck": {"TableName": "tx", "Key": {"pk": {"S": "guard"}},
                                        "ConditionExpression": "attribute_not_exists(pk)"}},
                ])
            except client.exceptions.TransactionCanceledException:
                pass
            except Exception:  # moto's deepcopy racing another thread's write
                crashed[0] += 1

    worker = threading.Thread(target=cancelling)
    worker.start()
    for n in range(writes):
        client.put_item(TableName="tx", Item={"pk": {"S": f"plain{n}"}})
    done.set()
    worker.join()
    present = 0
    kwargs: dict[str, Any] = {"TableName": "tx"}
    while True:
        page = client.scan(**kwargs)
        present += sum(1 for i in page["Items"] if i["pk"]["S"].startswith("plain"))
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return writes - present, crashed[0]


def main() -> None:

    # moto loads slowly: only on this path
    from moto import mock_aws
    from moto.dynamodb.responses import DynamoHandler

    sys.setswitchinterval(1e-6)
    original = DynamoHandler.call_action
    for locked in (False, True):
        if locked:
            lock = threading.RLock()

            def call_action(self: Any, lock: Any = lock) -> Any:
                with lock:
                    return original(self)

            DynamoHandler.call_action = call_action  # type: ignore[method-assign]
        with mock_aws():
            client = boto3.client("dynamodb", region_name="eu-west-2")
            _table(client, "fww")
            _table(client, "tx")
            trials, threads, writes = 200, 8, 300
            doubles = first_writer_wins(client, trials, threads)
            lost, crashed = rollback_erases(client, writes)
        label = "with the request lock" if locked else "moto as shipped    "
        print(f"{label}: first-writer-wins doubles {doubles}/{trials} trials x {threads} threads; "
              f"acknowledged writes erased by a cancelled transaction {lost}/{writes} "
              f"(transactions that crashed inside moto: {crashed})")
    DynamoHandler.call_action = original  # type: ignore[method-assign]


if __name__ == "__main__":
    main()
