"""Pulumi entry point: validate the stack's config, then declare the enabled systems."""

import datetime
import sys
from pathlib import Path

import pulumi
from pulumi.runtime.config import CONFIG

from components.config import ConfigError, api_version_warnings, from_pulumi_config
from components.stack import build

try:
    # The engine's values came from Pulumi.<stack>.yaml beside this file: problems are located
    # there (file:line:column), and no value is ever echoed.
    source = Path(__file__).resolve().parent / f"Pulumi.{pulumi.get_stack()}.yaml"
    stack_config = from_pulumi_config(CONFIG.get(), source)
except ConfigError as err:
    # One line per problem and no resources declared.
    for line in err.lines:
        pulumi.log.error(line)
    sys.exit(1)

# External API versions outside their providers' support windows: a warning, not an error.
for warning in api_version_warnings(stack_config, datetime.date.today()):
    pulumi.log.warn(warning)

for name, value in build(stack_config).items():
    pulumi.export(name, value)
