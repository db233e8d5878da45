"""The stack's one CloudWatch dashboard, drawn from what the blocks declared.

Per system: invocations and errors of its functions, the depth of its work and dead-letter
queues, and its business metrics (handlers/common/metrics.py, the same catalogue the handlers
emit). Nothing is listed by hand: the functions and queues come from the registry every
ScopedLambda and WorkQueue writes to, so a new function or queue shows up on its own.

A dashboard is global, but each metric widget names the region its metrics live in
(CloudWatch API Reference, "Dashboard Body Structure and Syntax", ``region`` of a metric widget:
https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/CloudWatch-Dashboard-Body-Structure.html).
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

from components.monitoring import DashboardRegistry
from handlers.common.metrics import CATALOGUE, DEGRADATIONS, DEGRADED, OTHER, BusinessMetric

WIDTH = 8
HEIGHT = 6
PERIOD_S = 3600


def _widget(title: str, region: str, metrics: list[list[Any]], x: int, y: int, **extra: Any) -> dict[str, Any]:
    return {
        "type": "metric",
        "x": x,
        "y": y,
        "width": WIDTH,
        "height": HEIGHT,
        "properties": {
            "title": title,
            "region": region,
            "metrics": metrics,
            "period": PERIOD_S,
            "stat": "Sum",
            "view": "timeSeries",
            **extra,
        },
    }


def _business_lines(namespace: str, system: str, metric: BusinessMetric) -> list[list[Any]]:
    if metric.dimension is None:
        return [[namespace, metric.name, "service", system, {"label": metric.what}]]
    return [
        [namespace, metric.name, "service", system, metric.dimension, value, {"label": value}]
        for value in (*metric.values, OTHER)
    ]


def _degradation_lines(namespace: str, system: str) -> list[list[Any]]:
    """The system's ``Degraded`` count, and each kind per function found by a SEARCH expression
    (which function degrades is the handlers' business; a search draws whichever did). Search
    expressions in dashboards: CloudWatch User Guide, "Using search expressions in graphs",
    https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-search-expressions.html."""
    lines: list[list[Any]] = [[namespace, DEGRADED, "service", system, {"label": "all fallbacks"}]]
    for i, kind in enumerate(DEGRADATIONS):
        query = (
            f"SEARCH('{{{namespace},function,service}} MetricName=\"{kind}\" "
            f"service=\"{system}\"', 'Sum', {PERIOD_S})"
        )
        lines.append([{"expression": query, "id": f"k{i}", "label": kind}])
    return lines


def body(
    registry: DashboardRegistry,
    namespace: str,
    regions: dict[str, str],
    *,
    business_metrics: bool = True,
) -> dict[str, Any]:
    """The dashboard body: one row of widgets per system, systems in declaration order (its
    business metrics only where the handlers emit them)."""
    widgets: list[dict[str, Any]] = []
    y = 0
    for system in registry.functions:
        region = regions[system]
        functions = [name for name, _ in registry.functions[system]]
        queues = registry.queues.get(system, [])
        widgets.append(
            {
                "type": "text",
                "x": 0,
                "y": y,
                "width": 24,
                "height": 1,
                "properties": {"markdown": f"## {system} ({region})"},
            }
        )
        y += 1
        row: list[dict[str, Any]] = []
        row.append(
            _widget(
                f"{system}: invocations",
                region,
                [["AWS/Lambda", "Invocations", "FunctionName", f] for f in functions],
                0,
                y,
            )
        )
        row.append(
            _widget(
                f"{system}: errors and throttles",
                region,
                [["AWS/Lambda", "Errors", "FunctionName", f] for f in functions]
                + [["AWS/Lambda", "Throttles", "FunctionName", f] for f in functions],
                0,
                y,
            )
        )
        if queues:
            row.append(
                _widget(
                    f"{system}: queue depth (dead-letter queues should be 0)",
                    region,
                    [
                        ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", q]
                        for q, _, _ in queues
                    ],
                    0,
                    y,
                    stat="Maximum",
                )
            )
        if system in registry.degradable:
            # Fallbacks are failures, not business: drawn whether or not business metrics are.
            row.append(
                _widget(
                    f"{system}: fallbacks taken (should be 0; the owner's digest says why)",
                    region,
                    _degradation_lines(namespace, system),
                    0,
                    y,
                )
            )
        for metric in CATALOGUE.get(system, ()) if business_metrics else ():
            row.append(
                _widget(
                    f"{system}: {metric.what}",
                    region,
                    _business_lines(namespace, system, metric),
                    0,
                    y,
                )
            )
            if metric.share_of:
                share: list[list[Any]] = [
                    [namespace, metric.name, "service", system, {"id": "part", "visible": False}],
                    [namespace, metric.share_of, "service", system, {"id": "whole", "visible": False}],
                    [{"expression": "100 * part / whole", "label": f"{metric.name} share %"}],
                ]
                row.append(_widget(f"{system}: {metric.what}, share %", region, share, 0, y))
        for i, widget in enumerate(row):
            widget["x"] = (i % 3) * WIDTH
            widget["y"] = y + (i // 3) * HEIGHT
        widgets.extend(row)
        y += ((len(row) + 2) // 3) * HEIGHT
    return {"widgets": widgets}


def declare(
    name: str,
    registry: DashboardRegistry,
    namespace: str,
    regions: dict[str, str],
    provider: aws.Provider,
    *,
    business_metrics: bool = True,
) -> aws.cloudwatch.Dashboard:
    """The stack's dashboard, ``<prefix>-crm-automations``."""
    board = body(registry, namespace, regions, business_metrics=business_metrics)
    return aws.cloudwatch.Dashboard(
        "dashboard",
        dashboard_name=name,
        dashboard_body=json.dumps(board, sort_keys=True),
        opts=pulumi.ResourceOptions(provider=provider),
    )
