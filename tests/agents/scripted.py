"""A scripted Messages API behind the real anthropic SDK (httpx2.MockTransport).

Each role has a queue of replies; a reply is a list of content blocks, or a function
of the request body (so a script can react to what a tool really returned).  Every
request is recorded with the role that sent it, so tests can assert on the tool
results the runner sent back, the tools offered, and the delegated task texts.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2

Block = dict[str, Any]
Reply = list[Block] | Callable[[dict[str, Any]], list[Block]]
_ids = itertools.count(1)


def text(t: str) -> Block:
    return {"type": "text", "text": t}


def tool_use(name: str, tool_input: dict[str, Any]) -> Block:
    return {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": tool_input}


def role_of(body: dict[str, Any]) -> str:
    system = body["system"]
    if isinstance(system, list):  # cached system prompt: one text block
        system = system[0]["text"]
    m = re.match(r"You are the (\S+) agent of kbopt\.", system)
    assert m, "every system prompt starts with the role line"
    return m.group(1)


def last_tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    if last["role"] != "user" or isinstance(last["content"], str):
        return []
    return [b for b in last["content"] if b.get("type") == "tool_result"]


class ScriptedAPI:
    def __init__(self, script: dict[str, list[Reply]], usage: tuple[int, int] = (100, 20)):
        self.script = {role: list(replies) for role, replies in script.items()}
        self.usage = usage
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        role = role_of(body)
        self.requests.append((role, body))
        queue = self.script.get(role)
        if not queue:
            return httpx2.Response(
                400,
                json={
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": f"script has no reply left for {role}",
                    },
                },
            )
        reply = queue.pop(0)
        blocks = reply(body) if callable(reply) else reply
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        return httpx2.Response(
            200,
            json={
                "id": f"msg_{len(self.requests):04d}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": self.usage[0], "output_tokens": self.usage[1]},
            },
        )

    def client(self) -> anthropic.Anthropic:
        transport = httpx2.MockTransport(self.handler)
        return anthropic.Anthropic(
            api_key="test", http_client=httpx2.Client(transport=transport), max_retries=0
        )

    # -------------------------------------------------------------- assertions helpers

    def roles_called(self) -> list[str]:
        return [role for role, _ in self.requests]

    def tool_results(self, role: str) -> list[dict[str, Any]]:
        out = []
        for r, body in self.requests:
            if r == role:
                out += last_tool_results(body)
        return out

    def first_user_message(self, role: str) -> str:
        for r, body in self.requests:
            if r == role:
                content = body["messages"][0]["content"]
                return content if isinstance(content, str) else json.dumps(content)
        raise AssertionError(f"{role} was never called")
