"""Commands a deployer runs against the AWS account: ``make secrets``, ``make preflight`` and
``make verify``. Each reads the stack's resources from the offline plan's graph (so it knows
every name and region without the Pulumi CLI) and talks to AWS through boto3."""
