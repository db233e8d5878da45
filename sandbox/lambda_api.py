"""Lambda's own API, answered in-process (moto's Lambda would need Docker to run anything).

``Invoke`` runs the target with the sandbox runtime: ``Event`` invocations are queued for the
pump as asynchronous invocations (retries and on-failure destination included),
``RequestResponse`` runs the target now, nested in the caller, and returns its payload.
``GetFunctionUrlConfig`` answers with the function's local URL, so a function that builds
links to itself (dm-merge's digest) links to the sandbox.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from botocore.response import StreamingBody

if TYPE_CHECKING:
    from sandbox.triggers import Triggers


class LambdaApi:
    """The two Lambda operations handlers call, as interceptor stand-ins."""

    def __init__(self, triggers: Triggers) -> None:
        self.triggers = triggers
        self.t = triggers.t
        self.runtime = triggers.runtime
        self.origin = triggers.origin
        self.local_urls = triggers.local_urls

    def get_function_url_config(
        self, service: str, operation: str, params: Mapping[str, Any], function: str | None
    ) -> dict[str, Any]:
        """Stand-in for Lambda ``GetFunctionUrlConfig``: the function's local URL."""
        name = str(params.get("FunctionName", ""))
        spec = (
            self.t.function_by_arn(name) if name.startswith("arn:") else self.t.functions.get(name)
        )
        url = self.local_urls.get(spec.name) if spec else None
        if spec is None or url is None or spec.url_auth is None:
            return {
                "Error": {
                    "Code": "ResourceNotFoundException",
                    "Message": f"no Function URL for {name}",
                },
                "ResponseMetadata": {"HTTPStatusCode": 404},
            }
        return {
            "FunctionUrl": url,
            "FunctionArn": spec.arn,
            "AuthType": spec.url_auth,
            "CreationTime": self.origin.isoformat(),
            "LastModifiedTime": self.origin.isoformat(),
            "InvokeMode": "BUFFERED",
        }

    def invoke(
        self, service: str, operation: str, params: Mapping[str, Any], function: str | None
    ) -> dict[str, Any]:
        """Stand-in for Lambda ``Invoke`` (moto would need Docker): ``Event`` invocations are
        queued for the pump as asynchronous invocations; ``RequestResponse`` runs the target
        in-process now (nested in the caller) and returns its payload."""
        name = str(params.get("FunctionName", ""))
        spec = (
            self.t.function_by_arn(name) if name.startswith("arn:") else self.t.functions.get(name)
        )
        if spec is None:
            return {
                "Error": {
                    "Code": "ResourceNotFoundException",
                    "Message": f"Function not found: {name}",
                },
                "ResponseMetadata": {"HTTPStatusCode": 404},
            }
        raw = params.get("Payload") or b"{}"
        data = raw.read() if hasattr(raw, "read") else raw
        event = json.loads(data.decode() if isinstance(data, bytes) else str(data))
        if params.get("InvocationType") == "Event":
            self.triggers.enqueue_async(spec.arn, event, f"invoke:{function or 'outside'}")
            return {"StatusCode": 202, "Payload": StreamingBody(io.BytesIO(b""), 0)}
        invocation = self.runtime.invoke(spec.name, event, source=f"invoke:{function or 'outside'}")
        body = json.dumps(
            invocation.result
            if invocation.ok
            else {"errorMessage": invocation.error, "errorType": invocation.error_type},
            default=str,
        ).encode()
        answer: dict[str, Any] = {
            "StatusCode": 200,
            "ExecutedVersion": "$LATEST",
            "Payload": StreamingBody(io.BytesIO(body), len(body)),
        }
        if not invocation.ok:
            answer["FunctionError"] = "Unhandled"
        return answer
