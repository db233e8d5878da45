"""Where touches, identities and enquiries live: DynamoDB.

Each function sees the store through the small port it needs (``CaptureStore``,
``StitchStore``, ``ReportStore``), which is also exactly what its IAM role allows:
capture only puts (conditionally), stitch queries and updates, report only queries.
``testsupport.ls.InMemoryStore`` implements all three with the same conditional semantics.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from botocore.exceptions import ClientError

from handlers.common import cold_path
from handlers.common.aws_clients import client, table
from handlers.common.transitions import condition_failed, transaction_condition_failed
from handlers.source_attributor.contract import TOUCH_TTL
from handlers.source_attributor.records import Enquiry, IdentityRow, Touch

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

_EARLIER_LINK = (
    "attribute_not_exists(linked_at) OR linked_at > :at OR (linked_at = :at AND linked_via > :via)"
)
_EARLIER_ENQUIRY = (
    "attribute_not_exists(enquiry_at) OR enquiry_at > :at "
    "OR (enquiry_at = :at AND enquiry_id > :eid)"
)


class CaptureStore(Protocol):
    """What ls-capture may do: create touches and enquiries, never overwrite."""

    def put_touch(self, touch: Touch) -> bool:
        """Write ``touch`` unless one exists at its key; False when it existed."""
        ...

    def put_enquiry(self, enquiry: Enquiry, asked: Touch | None) -> bool:
        """Write the enquiry and its asked touch together; False when the enquiry existed."""
        ...


class StitchStore(Protocol):
    """What ls-stitch may do: read identities and touches, add links."""

    def identity_rows(self, identity_key: str) -> dict[str, IdentityRow]:
        """Every row of one identity, by visitor id."""
        ...

    def linked_visitors(self, visitor_id: str) -> set[str]:
        """Other ids this visitor's browser presented alongside its own, from its touches."""
        ...

    def link(self, identity_key: str, visitor_id: str, linked_by: str, at: str, via: str) -> None:
        """Record the link, keeping whichever of this and an existing link is earliest."""
        ...

    def mark_enquirer(self, identity_key: str, visitor_id: str, enquiry_id: str, at: str) -> None:
        """Record that this device enquired, keeping its earliest enquiry."""
        ...

    def keep_until(self, identity_key: str, visitor_id: str, expires: int) -> None:
        """Move the row's expiry (its TTL) to ``expires`` unless it is already later."""
        ...


class ReportStore(Protocol):
    """What ls-report may do: query."""

    def enquiries(self, month: str) -> list[Enquiry]:
        """Every enquiry of one ``YYYY-MM`` partition."""
        ...

    def identity_visitors(self, identity_key: str) -> list[str]:
        """Every visitor id linked to one identity."""
        ...

    def touches(self, visitor_id: str) -> list[Touch]:
        """Every touch of one visitor, oldest first."""
        ...


# DynamoDB -----------------------------------------------------------------------------------


def _pages(table_name: str, **query: Any) -> Iterator[dict[str, Any]]:
    """Every item of a Query, following LastEvaluatedKey.

    Uses the low-level client, which (unlike a boto3 resource) is safe to share between the
    threads a report reads with.
    """
    dynamo_types = cold_path.load("boto3.dynamodb.types")


    serializer, deserializer = dynamo_types.TypeSerializer(), dynamo_types.TypeDeserializer()
    dynamodb = client("dynamodb")
    query["TableName"] = table_name
    query["ExpressionAttributeValues"] = {
        name: serializer.serialize(value)
        for name, value in query["ExpressionAttributeValues"].items()
    }
    while True:
        answer = dynamodb.query(**query)
        for item in answer.get("Items", []):
            yield {name: deserializer.deserialize(value) for name, value in item.items()}
        last = answer.get("LastEvaluatedKey")
        if not last:
            return
        query["ExclusiveStartKey"] = last


@dataclass
class DynamoStore:
    """The three tables by name; a function is configured with the tables its role reaches."""

    touches_table: str = ""
    identities_table: str = ""
    enquiries_table: str = ""

    def _table(self, name: str) -> Table:
        return table(self._name(name))

    @staticmethod
    def _name(name: str) -> str:
        if not name:
            raise RuntimeError("this function is not configured with that table")
        return name

    # capture
    def put_touch(self, touch: Touch) -> bool:
        try:
            self._table(self.touches_table).put_item(
                Item=touch.item(), ConditionExpression="attribute_not_exists(visitor_id)"
            )
        except ClientError as err:
            if condition_failed(err):
                return False
            raise
        return True

    def put_enquiry(self, enquiry: Enquiry, asked: Touch | None) -> bool:
        dynamo_types = cold_path.load("boto3.dynamodb.types")
        serializer = dynamo_types.TypeSerializer()

        def put(table: str, item: dict[str, Any], key: str) -> dict[str, Any]:
            return {
                "Put": {
                    "TableName": table,
                    "Item": {k: serializer.serialize(v) for k, v in item.items()},
                    "ConditionExpression": f"attribute_not_exists({key})",
                }
            }

        actions = [put(self.enquiries_table, enquiry.item(), "enquiry_id")]
        if asked is not None:
            actions.append(put(self.touches_table, asked.item(), "visitor_id"))
        try:
            client("dynamodb").transact_write_items(TransactItems=actions)
        except ClientError as err:
            # The enquiry is action 0: its key exists, so this submission was taken already.
            if transaction_condition_failed(err, 0):
                return False
            raise
        return True

    # stitch
    def identity_rows(self, identity_key: str) -> dict[str, IdentityRow]:
        rows = _pages(
            self._name(self.identities_table),
            KeyConditionExpression="identity_key = :k",
            ExpressionAttributeValues={":k": identity_key},
        )
        return {row.visitor_id: row for row in map(IdentityRow.from_item, rows)}

    def linked_visitors(self, visitor_id: str) -> set[str]:
        items = _pages(
            self._name(self.touches_table),
            KeyConditionExpression="visitor_id = :v",
            FilterExpression="attribute_exists(linked_visitor_id)",
            ProjectionExpression="linked_visitor_id",
            ExpressionAttributeValues={":v": visitor_id},
        )
        return {str(item["linked_visitor_id"]) for item in items} - {visitor_id}

    def _conditional_update(self, key: dict[str, str], update: str, condition: str,
                            values: dict[str, str]) -> None:
        try:
            self._table(self.identities_table).update_item(
                Key=key,
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
        except ClientError as err:
            if not condition_failed(err):
                raise

    def link(self, identity_key: str, visitor_id: str, linked_by: str, at: str, via: str) -> None:
        self._conditional_update(
            {"identity_key": identity_key, "visitor_id": visitor_id},
            "SET linked_by = :by, linked_at = :at, linked_via = :via",
            _EARLIER_LINK,
            {":by": linked_by, ":at": at, ":via": via},
        )

    def mark_enquirer(self, identity_key: str, visitor_id: str, enquiry_id: str, at: str) -> None:
        self._conditional_update(
            {"identity_key": identity_key, "visitor_id": visitor_id},
            "SET enquiry_id = :eid, enquiry_at = :at",
            _EARLIER_ENQUIRY,
            {":eid": enquiry_id, ":at": at},
        )

    def keep_until(self, identity_key: str, visitor_id: str, expires: int) -> None:
        try:
            self._table(self.identities_table).update_item(
                Key={"identity_key": identity_key, "visitor_id": visitor_id},
                UpdateExpression="SET #ttl = :ttl",
                ConditionExpression="attribute_not_exists(#ttl) OR #ttl < :ttl",
                ExpressionAttributeNames={"#ttl": TOUCH_TTL},
                ExpressionAttributeValues={":ttl": expires},
            )
        except ClientError as err:
            if not condition_failed(err):
                raise

    # report
    def enquiries(self, month: str) -> list[Enquiry]:
        items = _pages(
            self._name(self.enquiries_table),
            KeyConditionExpression="#m = :m",
            ExpressionAttributeNames={"#m": "month"},
            ExpressionAttributeValues={":m": month},
        )
        return [Enquiry.from_item(item) for item in items]

    def identity_visitors(self, identity_key: str) -> list[str]:
        items = _pages(
            self._name(self.identities_table),
            KeyConditionExpression="identity_key = :k",
            ProjectionExpression="visitor_id",
            ExpressionAttributeValues={":k": identity_key},
        )
        return [str(item["visitor_id"]) for item in items]

    def touches(self, visitor_id: str) -> list[Touch]:
        items = _pages(
            self._name(self.touches_table),
            KeyConditionExpression="visitor_id = :v",
            ExpressionAttributeValues={":v": visitor_id},
        )
        return [Touch.from_item(item) for item in items]
