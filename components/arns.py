"""ARNs built from known values: partition, region, account id and explicit physical names.

Building ARNs from strings rather than from other resources' outputs keeps every IAM document
known at ``pulumi preview``, where the policy pack judges it (CrossGuard skips unknown values).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

ROLE_BOUNDARY_PATH: Final = "/crm-pipeline/"
"""Where bootstrap/ keeps the pipeline's roles and the stacks' permissions boundaries."""


@dataclass(frozen=True)
class Arns:
    """ARN builder for one account and one region."""

    partition: str
    region: str
    account_id: str

    def _arn(
        self, service: str, resource: str, *, region: bool = True, account: bool = True
    ) -> str:
        return ":".join(
            [
                "arn",
                self.partition,
                service,
                self.region if region else "",
                self.account_id if account else "",
                resource,
            ]
        )

    def lambda_function(self, name: str) -> str:
        return self._arn("lambda", f"function:{name}")

    def role(self, name: str) -> str:
        return self._arn("iam", f"role/{name}", region=False)

    def user(self, name: str) -> str:
        return self._arn("iam", f"user/{name}", region=False)

    def policy(self, name: str, path: str = "/") -> str:
        """A customer managed policy (``path`` starts and ends with ``/``)."""
        return self._arn("iam", f"policy{path}{name}", region=False)

    def role_boundary(self, prefix: str) -> str:
        """The permissions boundary of every role of stack ``prefix`` (bootstrap/ creates it;
        the pipeline's deploy role may create no role without it)."""
        return self.policy(f"{prefix}-role-boundary", ROLE_BOUNDARY_PATH)

    def account_root(self) -> str:
        """The account as a principal (``"AWS": <root>`` stands for every identity in it)."""
        return self._arn("iam", "root", region=False)

    def assumed_role(self, role: str, session: str) -> str:
        return self._arn("sts", f"assumed-role/{role}/{session}", region=False)

    def log_group(self, name: str) -> str:
        return self._arn("logs", f"log-group:{name}")

    def log_streams(self, name: str) -> str:
        """Every log stream of one log group (the ``:*`` spans streams, not groups)."""
        return self._arn("logs", f"log-group:{name}:*")

    def table(self, name: str) -> str:
        return self._arn("dynamodb", f"table/{name}")

    def table_index(self, table: str, index: str) -> str:
        return self._arn("dynamodb", f"table/{table}/index/{index}")

    def table_streams(self, table: str) -> str:
        """The table's stream(s); the label part is only known after creation."""
        return self._arn("dynamodb", f"table/{table}/stream/*")

    def queue(self, name: str) -> str:
        return self._arn("sqs", name)

    def queue_url(self, name: str) -> str:
        return f"https://sqs.{self.region}.amazonaws.com/{self.account_id}/{name}"

    def topic(self, name: str) -> str:
        return self._arn("sns", name)

    def bucket(self, name: str) -> str:
        return self._arn("s3", name, region=False, account=False)

    def object(self, bucket: str, key: str) -> str:
        return self._arn("s3", f"{bucket}/{key}", region=False, account=False)

    def objects(self, bucket: str, prefix: str = "") -> str:
        """Object keys under one prefix of one bucket (``prefix`` ends with ``/`` or is empty)."""
        return self._arn("s3", f"{bucket}/{prefix}*", region=False, account=False)

    def secret(self, name: str, suffix: str = "??????") -> str:
        """One secret: Secrets Manager appends ``-`` and six random characters to its name
        (``suffix``: the pattern by default, or the characters of one created secret)."""
        return self._arn("secretsmanager", f"secret:{name}-{suffix}")

    def kms(self, resource: str) -> str:
        """A KMS key or alias: ``key/<id>`` or ``alias/<name>``."""
        return self._arn("kms", resource)

    def ssm_parameter(self, name: str) -> str:
        """A Systems Manager parameter (its name without the leading ``/``)."""
        return self._arn("ssm", f"parameter/{name.lstrip('/')}")

    def event_bus(self, name: str = "default") -> str:
        return self._arn("events", f"event-bus/{name}")

    def event_rule(self, name: str, bus: str = "default") -> str:
        resource = f"rule/{name}" if bus == "default" else f"rule/{bus}/{name}"
        return self._arn("events", resource)

    def schedule(self, group: str, name: str) -> str:
        return self._arn("scheduler", f"schedule/{group}/{name}")

    def schedules_in_group(self, group: str) -> str:
        """Every schedule of one schedule group (the ``*`` spans names inside one group)."""
        return self._arn("scheduler", f"schedule/{group}/*")

    def schedule_group(self, group: str) -> str:
        return self._arn("scheduler", f"schedule-group/{group}")

    def alarm(self, name: str) -> str:
        return self._arn("cloudwatch", f"alarm:{name}")

    def dashboard(self, name: str) -> str:
        """A CloudWatch dashboard: global, its ARN names no region."""
        return self._arn("cloudwatch", f"dashboard/{name}", region=False)

    def budget(self, name: str) -> str:
        """An AWS Budgets budget: global, its ARN names no region."""
        return self._arn("budgets", f"budget/{name}", region=False)

    def event_source_mapping(self, uuid: str) -> str:
        """A Lambda event source mapping, named by the UUID Lambda assigns."""
        return self._arn("lambda", f"event-source-mapping:{uuid}")

    def layer_version(self, account: str, layer: str, version: str) -> str:
        """A Lambda layer version, possibly another account's (AWS's public layers)."""
        return f"arn:{self.partition}:lambda:{self.region}:{account}:layer:{layer}:{version}"

    def public_parameter(self, name: str) -> str:
        """A parameter AWS publishes to every account (``/aws/service/...``): its ARN names
        no account of ours (``*`` also matches the empty account of a public parameter)."""
        return f"arn:{self.partition}:ssm:{self.region}:*:parameter/{name.lstrip('/')}"

    def ses_identity(self, identity: str) -> str:
        return self._arn("ses", f"identity/{identity}")

    def ses_configuration_set(self, name: str) -> str:
        return self._arn("ses", f"configuration-set/{name}")

    def ses_receipt_rule(self, rule_set: str, rule: str) -> str:
        return self._arn("ses", f"receipt-rule-set/{rule_set}:receipt-rule/{rule}")

    def inference_profile(self, profile_id: str) -> str:
        return self._arn("bedrock", f"inference-profile/{profile_id}")

    def foundation_model(self, model_id: str, *, region: str | None = None) -> str:
        """A foundation model in ``region`` (``""`` for the global profile's routing target)."""
        where = self.region if region is None else region
        return f"arn:{self.partition}:bedrock:{where}::foundation-model/{model_id}"

    def sms_resource(self, identity: str) -> str:
        """An AWS End User Messaging SMS origination identity, from the config's
        ``<kind>/<id>`` (``pool/pool-abc``, ``phone-number/...``, ``sender-id/Biz/GB``: the id
        keeps its own slashes)."""
        kind, _, identifier = identity.partition("/")
        return self._arn("sms-voice", f"{kind}/{identifier}")

    def sms_configuration_set(self, name: str) -> str:
        return self._arn("sms-voice", f"configuration-set/{name}")
