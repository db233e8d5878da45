"""Pulumi entry point: validate the stack's config, then declare the enabled systems."""

import datetime
import sys

import pulumi
from pulumi.runtime.config import CONFIG

from components.config import ConfigError, api_version_warnings, from_pulumi_config
from components.stack import build

try:
    stack_config = from_pulumi_config(CONFIG.get())
except ConfigError as err:
    # One clear message and no resources declared.
    pulumi.log.error(str(err))
    sys.exit(1)

# External API versions outside their providers' support windows: a warning, not an error.
for warning in api_version_warnings(stack_config, datetime.date.today()):
    pulumi.log.warn(warning)

for name, value in build(stack_config).items():
    pulumi.export(name, value)
