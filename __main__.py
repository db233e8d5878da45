"""Pulumi entry point: validate the stack's config, then declare the enabled systems."""

import sys

import pulumi
from pulumi.runtime.config import CONFIG

from components.config import ConfigError, from_pulumi_config
from components.stack import build

try:
    stack_config = from_pulumi_config(CONFIG.get())
except ConfigError as err:
    # One clear message and no resources declared.
    pulumi.log.error(str(err))
    sys.exit(1)

for name, value in build(stack_config).items():
    pulumi.export(name, value)
