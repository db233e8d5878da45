"""Commands a deployer runs against the AWS account: ``make secrets``, ``make preflight``,
``make verify`` and ``make forget`` / ``make export-person``. Each reads the stack's resources from the offline plan's graph (so it knows
every name and region without the Pulumi CLI) and talks to AWS through boto3."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING

from components.config import ConfigError

if TYPE_CHECKING:
    from components.offline.engine import Graph


def stack_command(doc: str) -> argparse.ArgumentParser:
    """A deployer command's parser: the first line of its module docstring, and ``--stack``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--stack", default="dev")
    return parser


CREDENTIALS_PAGE = "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html"


def no_credentials(command: str) -> bool:
    """Whether boto3 finds no credentials; if so, after saying it once, naming the fix (not once
    per region or per check: every call would fail the same way)."""
    import boto3  # botocore's data loads in a second or so: only for the commands that call AWS

    if boto3.Session().get_credentials() is not None:
        return False
    print(f"make {command}: no AWS credentials: give the AWS CLI the ones `pulumi up` uses "
          f"(aws configure, AWS_PROFILE; {CREDENTIALS_PAGE})", file=sys.stderr)
    return True


def plan_graph(stack: str) -> Graph | None:
    """The stack's offline graph; None after printing its config error (one line, no value)."""
    # The mock engine loads Pulumi and the program: only once a command has parsed its options.
    from components.offline.engine import run

    # Whether archives carry bytecode matters to `make plan` and `pulumi up`, which say so; a
    # command that only reads names and regions from the graph keeps it off the deployer's screen.
    archive_log = logging.getLogger("components.archive")
    level = archive_log.level
    archive_log.setLevel(logging.ERROR)
    try:
        return run(stack)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return None
    finally:
        archive_log.setLevel(level)
