"""secretStore: the same secrets in Secrets Manager (the documents' store, the key's
default) or as Parameter Store SecureStrings (both stack files), each readable by exactly the
functions that use it, none in Pulumi state."""

from __future__ import annotations

import json
from typing import Any

from testsupport.graphs import GraphCache

PARAMETER = "aws:ssm/parameter:Parameter"
SECRET = "aws:secretsmanager/secret:Secret"


def _reads(graph: Any, action: str) -> dict[str, set[str]]:
    """Resource ARN -> the role policies that may read it with ``action``."""
    found: dict[str, set[str]] = {}
    for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy"):
        for st in json.loads(policy.inputs["policy"])["Statement"]:
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            if action in actions:
                resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
                for arn in resources:
                    found.setdefault(arn, set()).add(str(policy.inputs["name"]))
    return found


def test_dev_parameters_are_securestrings_whose_value_never_enters_state(graphs: GraphCache) -> None:
    graph = graphs.run("dev")
    params = graph.of_type(PARAMETER)
    assert len(params) == 17 and graph.of_type(SECRET) == []
    for p in params:
        assert p.inputs["type"] == "SecureString" and p.inputs["tier"] == "Standard"
        assert str(p.inputs["name"]).startswith("/dev/")
        # The placeholder is write-only (value_wo): never stored in state, never read back.
        assert "value" not in p.inputs and "insecureValue" not in p.inputs
        assert p.inputs["valueWoVersion"] == 1
        assert "keyId" not in p.inputs  # the AWS managed key aws/ssm: no monthly key charge


def test_each_parameter_is_read_by_the_same_functions_as_its_secret(graphs: GraphCache) -> None:
    # The grant follows the store: GetParameter on the one parameter where the same stack has
    # GetSecretValue on the one secret, for the same roles; no kms:Decrypt (aws/ssm lets the
    # account decrypt through Parameter Store, so the GetParameter grant is the control).
    dev, prod = graphs.run("dev"), graphs.run("dev", {"secretStore": "secretsmanager"})
    by_name_dev = {arn.rsplit("/", 1)[1]: {r.removeprefix("dev-") for r in roles}
                   for arn, roles in _reads(dev, "ssm:GetParameter").items()}
    by_name_prod = {arn.split(":secret:dev-", 1)[1].removesuffix("-??????"):
                    {r.removeprefix("dev-") for r in roles}
                    for arn, roles in _reads(prod, "secretsmanager:GetSecretValue").items()}
    assert by_name_dev == by_name_prod and len(by_name_dev) == 17
    assert _reads(dev, "secretsmanager:GetSecretValue") == {}
    assert _reads(dev, "kms:Decrypt") == {}
    for arn in _reads(dev, "ssm:GetParameter"):
        assert arn.startswith("arn:aws:ssm:") and ":parameter/dev/" in arn and "*" not in arn
