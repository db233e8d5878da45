"""Test doubles for services moto does not emulate: a scripted Bedrock ``converse``.

``FakeBedrockClient`` answers ``converse`` from a script, records every request, and raises real
botocore ``ClientError``s for scripted failures, so code under test takes exactly the paths it
takes against Bedrock. A test double: it lives outside ``handlers`` and never ships (the
archive builder refuses ``testsupport``).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from botocore.exceptions import ClientError


class FakeBedrockClient:
    """A ``bedrock-runtime`` stand-in with scripted answers.

    Script answers in call order with ``add_tool_answer`` / ``add_text_answer`` /
    ``add_error``; ``throttle(n)`` makes the next ``n`` calls fail with
    ``ThrottlingException`` before the script resumes. ``calls`` holds each request's kwargs.
    """

    def __init__(self, tool_inputs: list[Any] | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self._script: deque[tuple[str, Any]] = deque()
        for tool_input in tool_inputs or []:
            self.add_tool_answer(tool_input)

    def add_tool_answer(
        self, tool_input: Any, *, tool_name: str | None = None
    ) -> FakeBedrockClient:
        """Answer with one tool use; ``tool_name`` None means the tool the request forced."""
        self._script.append(("tool", (tool_input, tool_name)))
        return self

    def add_text_answer(self, text: str) -> FakeBedrockClient:
        """Answer with plain text and no tool use."""
        self._script.append(("raw", _response([{"text": text}], "end_turn")))
        return self

    def add_error(self, code: str, message: str = "scripted failure") -> FakeBedrockClient:
        """Fail the next call with a botocore ``ClientError`` carrying ``code``."""
        self._script.append(("error", (code, message)))
        return self

    def throttle(self, times: int, code: str = "ThrottlingException") -> FakeBedrockClient:
        """Fail the next ``times`` calls with ``code`` (a retryable error by default)."""
        for _ in range(times):
            self.add_error(code, "Too many requests, please wait before trying again.")
        return self

    @property
    def pending(self) -> int:
        """Scripted answers not yet consumed."""
        return len(self._script)

    def converse(self, **kwargs: Any) -> dict[str, Any]:
        """Record the request and play the next scripted answer."""
        self.calls.append(kwargs)
        if not self._script:
            raise AssertionError("FakeBedrockClient: converse called with no scripted answer left")
        kind, payload = self._script.popleft()
        if kind == "error":
            code, message = payload
            raise ClientError({"Error": {"Code": code, "Message": message}}, "Converse")
        if kind == "raw":
            return dict(payload)
        tool_input, tool_name = payload
        if tool_name is None:
            tool_name = kwargs["toolConfig"]["toolChoice"]["tool"]["name"]
        block = {
            "toolUse": {
                "toolUseId": f"tooluse_{len(self.calls)}",
                "name": tool_name,
                "input": tool_input,
            }
        }
        return _response([block], "tool_use")


def _response(content: list[dict[str, Any]], stop_reason: str) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop_reason,
        "usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120},
        "metrics": {"latencyMs": 5},
    }


class LambdaStub:
    """A Lambda client that records ``invoke`` calls (a function invoking itself or another
    asynchronously) instead of running them; the test runs them when it chooses."""

    def __init__(self) -> None:
        self.invocations: list[dict[str, Any]] = []

    def invoke(self, **kwargs: Any) -> dict[str, Any]:
        self.invocations.append(kwargs)
        return {"StatusCode": 202}
