"""``make teardown STACK=<stack>``: print the commands that remove the stack, in order.

Nothing is run: removing a stack is the deployer's decision, command by command. dev has no
protection (tables without deletion protection, buckets emptied by ``pulumi destroy``, secrets
deleted at once: recovery window 0, or Parameter Store parameters, which have none, so a new dev
stack can reuse the names the same day) and
needs ``pulumi destroy`` alone. prod protects its data on purpose, so its path lifts each guard
first: Pulumi's ``protect`` (https://www.pulumi.com/docs/iac/concepts/options/protect/), each
table's DynamoDB deletion protection, the versioned buckets' contents (``pulumi destroy`` refuses
a bucket that is not empty), then destroys, and finally shows how to delete the secrets at once:
Secrets Manager keeps a deleted secret's name for its 30-day recovery window, and a stack
re-created within it fails on those names
(https://docs.aws.amazon.com/secretsmanager/latest/userguide/manage_delete-restore-secret.html).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

from components.offline.engine import ACCOUNT_ID, Graph, Resource
from components.operate import plan_graph, stack_command
from components.operate.stack_secrets import secrets_in

EMPTY_BUCKET_PAGE = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/empty-bucket.html"


def _region(arn: str) -> str:
    return arn.split(":")[3]


def bucket_name(bucket: Resource) -> str:
    """The bucket's name as the deployer sees it: the offline plan's stand-in account id (names
    end in the account id) becomes ``<account id>``, what ``aws sts get-caller-identity`` answers."""
    return str(bucket.inputs["bucket"]).replace(ACCOUNT_ID, "<account id>")


def steps(graph: Graph) -> Iterator[str]:
    """The commands, numbered, for this stack."""
    stack = graph.stack
    protected_tables = [
        t for t in graph.of_type("aws:dynamodb/table:Table") if t.inputs.get("deletionProtectionEnabled")
    ]
    kept_buckets = [b for b in graph.of_type("aws:s3/bucket:Bucket") if not b.inputs.get("forceDestroy")]
    windowed = [
        s for s in graph.of_type("aws:secretsmanager/secret:Secret")
        if int(s.inputs.get("recoveryWindowInDays") or 0) > 0
    ]
    n = 0

    def step(text: str) -> str:
        nonlocal n
        n += 1
        return f"{n}. {text}"

    if not (protected_tables or kept_buckets or windowed):
        yield step(f"pulumi destroy --stack {stack}   # nothing is protected in {stack}")
        return
    yield step(f"pulumi state unprotect --all --stack {stack} --yes   # lift Pulumi's protect")
    for table in protected_tables:
        region = _region(str(table.outputs.get("arn", "")))
        yield step(
            f"aws dynamodb update-table --region {region} --table-name {table.inputs['name']} "
            "--no-deletion-protection-enabled"
        )
    for bucket in kept_buckets:
        yield step(
            f"empty s3://{bucket_name(bucket)} with every object version (S3 console: select "
            f"the bucket, Empty; {EMPTY_BUCKET_PAGE})"
        )
    yield step(f"pulumi destroy --stack {stack}")
    for secret in secrets_in(graph):
        if secret.physical in {str(s.inputs["name"]) for s in windowed}:
            yield step(
                f"aws secretsmanager delete-secret --region {secret.region} --secret-id "
                f"{secret.physical} --force-delete-without-recovery   # only to re-create the "
                "stack within 30 days; otherwise its values stay recoverable"
            )


def main(argv: list[str] | None = None) -> int:
    parser = stack_command(__doc__ or "")
    options = parser.parse_args(argv)
    graph = plan_graph(options.stack)
    if graph is None:
        return 2
    print(f"Removing stack {options.stack} (nothing here is run; read each line first):")
    print("\n".join(steps(graph)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
