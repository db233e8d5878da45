"""The whole stack: providers per region, shared resources, the enabled systems, the budget.

``build(config)`` is what ``__main__.py`` runs and what the offline engine runs on mocks, so the
program that is tested is the program that is deployed.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from components import dashboard
from components.alert_topic import (
    AlertTopic,
    AlertTopicArgs,
    ServicePublisher,
    alarms_publisher,
    budgets_publisher,
)
from components.arns import Arns
from components.config import StackConfig
from components.deployment import Deployment
from components.mail_identity import MailIdentities
from components.monitoring import DashboardRegistry, Monitoring, declare_alarm, regional_throttles
from components.systems import entry
from components.systems.base import System, SystemArgs

POWERTOOLS_PARAMETER = "/aws/service/powertools/python/arm64/python3.14/latest"
BUDGET_REGION = "us-east-1"


def build(config: StackConfig) -> dict[str, Any]:
    """Declare every resource of the stack; return the stack outputs."""
    enabled = config.systems.enabled()
    regions = sorted({settings.region for settings in enabled.values()} | {BUDGET_REGION})
    providers = {
        region: aws.Provider(
            f"aws-{region}",
            region=region,
            default_tags=aws.ProviderDefaultTagsArgs(
                tags={"crm:stack": config.prefix, "pulumi:project": "crm-automations"}
            ),
        )
        for region in regions
    }
    home = providers[BUDGET_REGION]
    identity = aws.get_caller_identity(opts=pulumi.InvokeOptions(provider=home))
    partition = aws.get_partition(opts=pulumi.InvokeOptions(provider=home)).partition

    mail: dict[str, MailIdentities] = {}
    registry = DashboardRegistry()
    alarm_topics = (
        {
            region: _alarm_topic(config, region, providers[region], identity.account_id, partition)
            for region in sorted({settings.region for settings in enabled.values()})
        }
        if config.alarms != "none"
        else {}
    )
    for region, topic in alarm_topics.items():
        _throttles_alarm(config, region, topic, providers[region])
    outputs: dict[str, Any] = {"prefix": config.prefix, "systems": sorted(enabled)}
    for key, settings in enabled.items():
        region = settings.region
        provider = providers[region]
        deployment = Deployment(
            prefix=config.prefix,
            environment=config.environment,
            system=key,
            region=region,
            account_id=identity.account_id,
            partition=partition,
            provider=provider,
            powertools_layer_arn=_powertools_layer(config, region, provider),
            secret_store=config.secret_store,
            queue_triggers=config.queue_triggers,
            alert_email=config.alert_email,
            permissions_boundary=(
                Arns(partition, region, identity.account_id).role_boundary(config.prefix)
                if config.permissions_boundary
                else None
            ),
            public_concurrency=config.public_concurrency,
            mail=mail.setdefault(
                region,
                MailIdentities(
                    Arns(partition, region, identity.account_id),
                    provider,
                    config.prefix,
                    owner=config.mail_identity_owner,
                ),
            ),
            monitoring=Monitoring(
                alarm_topic_arn=alarm_topics[region].topic_arn if region in alarm_topics else "",
                namespace=metrics_namespace(config.prefix),
                tracing=config.tracing,
                alarms=config.alarms,
                business_metrics=config.business_metrics,
                registry=registry,
            ),
        )
        cls = entry(key).load()
        system = cls(
            key,
            SystemArgs(
                deployment=deployment,
                settings=settings,
                hubspot_api_version=config.hubspot_api_version,
            ),
            pulumi.ResourceOptions(providers={"aws": provider}),
        )
        assert isinstance(system, System)
        outputs[key] = system.exports

    dkim = {region: registry.dkim_tokens() for region, registry in mail.items()}
    outputs["sesDkimTokens"] = {region: tokens for region, tokens in dkim.items() if tokens}
    # Identities another stack of the account owns (mailIdentityOwner): sent from, not declared.
    referenced = {region: registry.referenced() for region, registry in mail.items()}
    outputs["sesIdentitiesReferenced"] = {r: d for r, d in referenced.items() if d}
    _budget(config, home, identity.account_id, partition, alarm_topics.get(BUDGET_REGION))
    if config.dashboard:
        board = dashboard.declare(
            f"{config.prefix}-crm-automations",
            registry,
            metrics_namespace(config.prefix),
            {key: settings.region for key, settings in enabled.items()},
            home,
            business_metrics=config.business_metrics,
        )
        outputs["dashboard"] = board.dashboard_name
    outputs["alarmTopics"] = {region: topic.topic_arn for region, topic in alarm_topics.items()}
    return outputs


def metrics_namespace(prefix: str) -> str:
    """One CloudWatch namespace per stack for the business metrics: ``crm/<prefix>``."""
    return f"crm/{prefix}"


def _alarm_topic(
    config: StackConfig, region: str, provider: aws.Provider, account_id: str, partition: str
) -> AlertTopic:
    """The alert topic of one region: the alarms of that region publish to it.

    An alarm's action names a topic of the alarm's own region (components/monitoring.py), so
    every region with a system has one, ``<prefix>-alarms-<region>`` (the region in the name
    keeps its key alias unique across regions too), emailing ``alertEmail`` and
    ``alertSubscribers``. It is an AlertTopic: CloudWatch publishes as a service, so the key
    must admit ``cloudwatch.amazonaws.com`` (components/alert_topic.py).
    """
    arns = Arns(partition, region, account_id)
    # The budget's region topic also carries the budget's notices: one key fewer ($1 a month).
    publishers: tuple[ServicePublisher, ...] = (alarms_publisher(arns),)
    if region == BUDGET_REGION:
        publishers += (budgets_publisher(arns),)
    return AlertTopic(
        f"alarms-{region}",
        AlertTopicArgs(
            arns=arns,
            name=f"{config.prefix}-alarms-{region}",
            publishers=publishers,
            emails=tuple(dict.fromkeys((config.alert_email, *config.alert_subscribers))),
            tags={"crm:stack": config.prefix},
            encrypted=config.alert_topic_key == "customer-managed",
        ),
        pulumi.ResourceOptions(providers={"aws": provider}),
    )


def _throttles_alarm(
    config: StackConfig, region: str, topic: AlertTopic, provider: aws.Provider
) -> None:
    """One alarm on the region's dimensionless ``Throttles`` (every function of the region)."""
    monitoring = Monitoring(alarm_topic_arn=topic.topic_arn, alarms=config.alarms)
    declare_alarm(
        f"throttles-{region}",
        f"{config.prefix}-lambda-throttles-{region}",
        regional_throttles(),
        f"Throttles of any Lambda function in {region}",
        monitoring,
        {"crm:stack": config.prefix},
        topic,
    )


def _powertools_layer(config: StackConfig, region: str, provider: aws.Provider) -> str:
    """The pinned layer ARN for ``region``, or the latest one AWS publishes in SSM."""
    pinned = config.powertools_layer_arns.get(region)
    if pinned:
        return pinned
    parameter = aws.ssm.get_parameter(
        name=POWERTOOLS_PARAMETER, opts=pulumi.InvokeOptions(provider=provider)
    )
    return parameter.value


def _budget(
    config: StackConfig,
    provider: aws.Provider,
    account_id: str,
    partition: str,
    shared: AlertTopic | None,
) -> None:
    """One monthly cost budget per stack, alerting an SNS topic that emails the alert address.

    The budget watches the whole account, as the documents ask: dev and prod share the account,
    and a runaway loop in either is what the alarm is for. The topic is the alarm topic of the
    budget's region when there is one (``shared``), else a topic of its own; either is an
    AlertTopic: under ``alias/aws/sns`` Budgets could never publish (components/alert_topic.py).
    """
    arns = Arns(partition, BUDGET_REGION, account_id)
    alerts = shared or AlertTopic(
        "budget-alerts",
        AlertTopicArgs(
            arns=arns,
            name=f"{config.prefix}-budget-alerts",
            publishers=(budgets_publisher(arns),),
            emails=(config.alert_email,),
            tags={"crm:stack": config.prefix},
            encrypted=config.alert_topic_key == "customer-managed",
        ),
        pulumi.ResourceOptions(providers={"aws": provider}),
    )
    topic_arn = alerts.topic_arn
    aws.budgets.Budget(
        "monthly-budget",
        name=f"{config.prefix}-crm-automations-monthly",
        budget_type="COST",
        time_unit="MONTHLY",
        limit_amount=f"{config.monthly_budget_usd:.2f}",
        limit_unit="USD",
        notifications=[
            aws.budgets.BudgetNotificationArgs(
                comparison_operator="GREATER_THAN",
                notification_type=kind,
                threshold=threshold,
                threshold_type="PERCENTAGE",
                subscriber_sns_topic_arns=[topic_arn],
            )
            for kind, threshold in (("ACTUAL", 80), ("ACTUAL", 100), ("FORECASTED", 100))
        ],
        opts=pulumi.ResourceOptions(provider=provider, depends_on=[alerts]),
    )
