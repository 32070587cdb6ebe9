"""The console an agent talks to: a real `verity serve` (started by tests/consoles.py's `serve`, here one per
module), on the tiny model, with the API tokens an agent holds and a completed baseline, and the SDK's own clients:
streamable HTTP to its /mcp, and `verity mcp` over stdio."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from consoles import console_env, create_token, serve, verity_cli
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from domain.organizations import Organization, Project
from verity.config import Settings
from verity.wiring import build_application

REPO_ROOT = Path(__file__).resolve().parents[2]
HELD_OUT = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 16}
MATH_PAIRS_SCORING = {"preset": "verifiable", "format_bonus": True}
ENDED = ("adapter_ready", "completed", "failed", "cancelled")


@dataclass
class Console:
    """`verity serve` in its own process, its data folder, and the tokens made with `verity token create`:
    `agent` (a member of Default, on Pro), `watcher` (a viewer of Default) and `outsider` (an owner of Free, an
    organization on the Free plan). `baseline` is a completed baseline of Default's Demo project."""

    url: str
    env: dict[str, str]
    settings: Settings
    tokens: dict[str, str]
    baseline: dict[str, Any]

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    def api(self, token: str = "agent") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[token]}"}

    def position(self) -> int:
        """Where the event store is: what every process of the console has recorded so far."""
        verity = build_application(self.settings)
        try:
            return verity.recorder.max_notification_id() or 0
        finally:
            verity.close()

    @asynccontextmanager
    async def over_http(self, token: str = "agent") -> AsyncIterator[Client]:
        """The SDK's client on the console's streamable HTTP endpoint, with the token as the API takes it."""
        http = httpx2.AsyncClient(headers=self.api(token), timeout=httpx2.Timeout(30.0, read=120.0))
        async with http, Client(streamable_http_client(self.mcp_url, http_client=http)) as client:
            yield client

    @asynccontextmanager
    async def over_stdio(self, token: str = "agent") -> AsyncIterator[Client]:
        """The SDK's client on `verity mcp`, started as a local agent starts it: the token in its environment."""
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "verity.cli", "mcp", "--url", self.url],
            env={**self.env, "VERITY_API_TOKEN": self.tokens[token]}, cwd=str(REPO_ROOT),
        )
        async with Client(params) as client:
            yield client

    def call(self, name: str, token: str = "agent", **arguments: Any) -> CallToolResult:
        """One tool call over HTTP, on a connection of its own."""

        async def one() -> CallToolResult:
            async with self.over_http(token) as client:
                return await client.call_tool(name, arguments)

        return anyio.run(one)


def answer(result: CallToolResult) -> dict[str, Any]:
    """A tool's answer: its structured content, which its text repeats as JSON."""
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content or {}


def refusal(result: CallToolResult) -> str:
    """A refused call's words: a tool error, as the protocol has it."""
    assert result.is_error, result.structured_content
    return result.content[0].text


def _completed_baseline(url: str, token: str) -> dict[str, Any]:
    """A baseline of the Demo project on the Math Pairs held-out benchmark, created through the API and waited for."""
    project_id = Project.create_id(Organization.create_id("Default"), "Demo")
    body = {"project_id": str(project_id), "name": "Baseline", "source": HELD_OUT, "scoring": MATH_PAIRS_SCORING,
            "main_metric": "math_pairs", "max_answer_tokens": 16}
    headers = {"Authorization": f"Bearer {token}"}
    created = httpx.post(f"{url}/api/evaluations", json=body, headers=headers, timeout=30)
    assert created.status_code == 201, created.text
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        evaluation = httpx.get(f"{url}/api/evaluations/{created.json()['id']}", headers=headers, timeout=30).json()
        if evaluation["evaluation"]["state"] not in ("queued", "running"):
            assert evaluation["evaluation"]["state"] == "completed", evaluation["evaluation"]["failure"]
            return evaluation["evaluation"]
        time.sleep(0.5)
    raise AssertionError("the baseline evaluation did not finish")


def serve_console(data: Path, tiny_model_dir: Path) -> Iterator[Console]:
    """`verity serve` on a new data folder, its Free organization, tokens and baseline; stopped after."""
    settings = Settings(data_dir=data)
    settings.models_dir.mkdir(parents=True)
    settings.tiny_model_dir.symlink_to(tiny_model_dir, target_is_directory=True)  # the Demo project's model
    env = console_env(data, "VERITY_API_TOKEN")
    with serve(data, env) as (url, _):
        verity_cli(env, "org", "create", "Free", "--owner", "free@localhost", "--plan", "free")
        tokens = {
            "agent": create_token(env, "agent", "member"),
            "watcher": create_token(env, "watcher", "viewer"),
            "outsider": create_token(env, "outsider", "owner", "--organization", "Free"),
        }
        baseline = _completed_baseline(url, tokens["agent"])
        yield Console(url, env, settings, tokens, baseline)
