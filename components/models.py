"""Bedrock model access: the grant a declared model caller holds for its configured model.

The documents call Haiku 4.5 through the Global cross-Region inference profile. Invoking a
profile needs permission on the profile in the caller's region and on the foundation model it
routes to, in the region and (for global profiles) region-less; nothing else.
"""

from __future__ import annotations

from components.config import ModelChoice
from components.deployment import Deployment
from components.grants import Grant

_GEOGRAPHIES = ("global.", "us.", "eu.", "apac.", "jp.", "au.")
INVOKE_ACTIONS = ("bedrock:InvokeModel",)


def model_arns(deployment: Deployment, model_id: str) -> tuple[str, ...]:
    """ARNs that invoking ``model_id`` (a profile or a base model id) touches."""
    arns = deployment.arns
    for geography in _GEOGRAPHIES:
        if model_id.startswith(geography):
            base = model_id.removeprefix(geography)
            found = [arns.inference_profile(model_id), arns.foundation_model(base)]
            if geography == "global.":
                found.append(arns.foundation_model(base, region=""))
            return tuple(found)
    return (arns.foundation_model(model_id),)


def model_grant(deployment: Deployment, choice: ModelChoice, *, sid: str) -> Grant:
    """InvokeModel (which Converse uses) on the callsite's active model only."""
    resources: list[str] = []
    for model_id in choice.granted:
        resources.extend(model_arns(deployment, model_id))
    return Grant(sid, INVOKE_ACTIONS, tuple(dict.fromkeys(resources)))
