"""nothing-always-on: no resource that bills by the hour whether or not it is used.

What: the stack declares none of: provisioned capacity (a DynamoDB table whose ``billingMode``
is not ``PAY_PER_REQUEST``, which the provider defaults to ``PROVISIONED``; a Lambda
``ProvisionedConcurrencyConfig``; Bedrock provisioned throughput; a Batch compute environment
with ``minVcpus`` above zero), NAT gateways, Elastic IPs, interface VPC endpoints, EC2 instances
and fleets, Auto Scaling groups, ECS, EKS, App Runner, Lightsail, Elastic Beanstalk, load
balancers, API Gateway (REST v1 and HTTP/WebSocket v2), RDS, DocumentDB, Neptune, Redshift,
ElastiCache, MemoryDB, DAX, OpenSearch, MSK, Amazon MQ, Kinesis streams, EMR, SageMaker
endpoints and notebooks, Transfer Family servers, FSx, WorkSpaces, AppStream, Directory
Service, Transit Gateway, Client VPN, Network Firewall, Global Accelerator.

Why: "Nothing always-on: no instance, no container, no provisioned capacity" (000, 002); "no
API Gateway, no NAT Gateway, and nothing always-on" (001, 003, 004). These systems see a
handful of events a day; anything billed per hour costs more than everything else together.

Fix: Lambda Function URLs instead of API Gateway, on-demand tables, no VPC; if a resource is
really needed, list its type token in ``allowedTypes`` in the pack config and say why.
"""

from __future__ import annotations

from typing import Final

from pulumi_policy import ReportViolation, ResourceValidationArgs

from policies.common.config import get_strings, schema, string_list
from policies.common.props import get_path, props_of
from policies.common.rule import config_of, resource_policy

NAME: Final = "nothing-always-on"

FORBIDDEN_MODULES: Final[dict[str, str]] = {
    "apigateway": "API Gateway (REST)",
    "apigatewayv2": "API Gateway (HTTP/WebSocket)",
    "ecs": "ECS",
    "eks": "EKS",
    "apprunner": "App Runner",
    "lightsail": "Lightsail",
    "elasticbeanstalk": "Elastic Beanstalk",
    "lb": "a load balancer",
    "alb": "a load balancer",
    "elb": "a load balancer",
    "rds": "RDS",
    "docdb": "DocumentDB",
    "neptune": "Neptune",
    "redshift": "Redshift",
    "elasticache": "ElastiCache",
    "memorydb": "MemoryDB",
    "dax": "DAX",
    "opensearch": "OpenSearch",
    "elasticsearch": "Elasticsearch",
    "msk": "MSK",
    "mq": "Amazon MQ",
    "emr": "EMR",
    "fsx": "FSx",
    "workspaces": "WorkSpaces",
    "appstream": "AppStream",
    "directoryservice": "Directory Service",
    "ec2transitgateway": "Transit Gateway",
    "ec2clientvpn": "Client VPN",
    "networkfirewall": "Network Firewall",
    "globalaccelerator": "Global Accelerator",
}
"""Modules (the part between ``aws:`` and ``/``) that are always-on as a whole."""

FORBIDDEN_TYPES: Final[dict[str, str]] = {
    "aws:ec2/natGateway:NatGateway": "a NAT gateway",
    "aws:ec2/eip:Eip": "an Elastic IP",
    "aws:ec2/instance:Instance": "an EC2 instance",
    "aws:ec2/spotInstanceRequest:SpotInstanceRequest": "an EC2 spot instance",
    "aws:ec2/spotFleetRequest:SpotFleetRequest": "an EC2 spot fleet",
    "aws:ec2/fleet:Fleet": "an EC2 fleet",
    "aws:ec2/dedicatedHost:DedicatedHost": "a dedicated host",
    "aws:ec2/capacityReservation:CapacityReservation": "an EC2 capacity reservation",
    "aws:autoscaling/group:Group": "an Auto Scaling group",
    "aws:kinesis/stream:Stream": "a Kinesis stream",
    "aws:sagemaker/endpoint:Endpoint": "a SageMaker endpoint",
    "aws:sagemaker/notebookInstance:NotebookInstance": "a SageMaker notebook instance",
    "aws:transfer/server:Server": "a Transfer Family server",
    "aws:lambda/provisionedConcurrencyConfig:ProvisionedConcurrencyConfig": (
        "Lambda provisioned concurrency"
    ),
    "aws:bedrock/provisionedModelThroughput:ProvisionedModelThroughput": (
        "Bedrock provisioned throughput"
    ),
}
"""Single resource types that are always-on."""


def always_on_reason(resource_type: str, props: dict[str, object]) -> str | None:
    """Why a resource bills by the hour, or None."""
    if resource_type in FORBIDDEN_TYPES:
        return FORBIDDEN_TYPES[resource_type]
    module = (
        resource_type.split(":", 2)[1].split("/", 1)[0] if resource_type.count(":") >= 2 else ""
    )
    if resource_type.startswith("aws:") and module in FORBIDDEN_MODULES:
        return FORBIDDEN_MODULES[module]
    if resource_type == "aws:dynamodb/table:Table":
        mode = props.get("billingMode")
        if mode != "PAY_PER_REQUEST":
            shown = "unset, so PROVISIONED" if mode is None else repr(mode)
            return f"a DynamoDB table with provisioned capacity (billingMode {shown})"
    if (
        resource_type == "aws:ec2/vpcEndpoint:VpcEndpoint"
        and props.get("vpcEndpointType") != "Gateway"
    ):
        return "an interface VPC endpoint"
    if resource_type == "aws:batch/computeEnvironment:ComputeEnvironment":
        minimum = get_path(props, "computeResources", "minVcpus")
        if isinstance(minimum, int | float) and minimum > 0:
            return f"a Batch compute environment keeping {minimum} vCPUs running"
    return None


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    allowed = get_strings(config_of(args), "allowedTypes", ())
    if args.resource_type in allowed:
        return
    reason = always_on_reason(args.resource_type, props_of(args))
    if reason:
        report(f"{args.resource_type} {args.name} is {reason}, which is always on", None)


POLICY: Final = resource_policy(
    NAME,
    "Nothing always-on: no instances, containers, gateways, databases or provisioned capacity.",
    _validate,
    remediation=(
        "Use Lambda (Function URLs, event sources, schedules) and on-demand DynamoDB; remove "
        "the always-on resource."
    ),
    config_schema=schema(
        allowedTypes=string_list("Type tokens exempted from this rule", ()),
    ),
)
