"""`verity mcp`: the console's MCP server for a local agent, over stdio.

The tools run in the console (its /mcp endpoint), not here: on the embedded default the job worker lives inside
`verity serve`, so only that process can start a run. This process is the official SDK's stdio server in front
of the SDK's streamable HTTP client, and forwards the agent's tool listings and calls with the organization's API
token, so an agent on stdio gets the same tools, checks and words as one on HTTP.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams

DEFAULT_CONSOLE = "http://127.0.0.1:8000"
TOKEN_ENV = "VERITY_API_TOKEN"
# A call answers when its command is recorded (start_training launches and returns): 30 s to connect, a minute
# to answer.
TIMEOUT = httpx2.Timeout(30.0, read=60.0)


class ConsoleUnreachable(Exception):
    """The console did not take the token or did not answer; the message says which, in words."""


def endpoint(console: str) -> str:
    """The console's MCP endpoint: `http://127.0.0.1:8000` -> `http://127.0.0.1:8000/mcp`."""
    url = console.strip().rstrip("/")
    return url if url.endswith("/mcp") else f"{url}/mcp"


async def serve_stdio(console: str, token: str) -> None:
    """Answer an agent on stdin/stdout until it closes them, with the tools of the console at `console`."""
    url = endpoint(console)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)
    async with http, AsyncExitStack() as stack:
        try:
            upstream = await stack.enter_async_context(Client(streamable_http_client(url, http_client=http)))
            await upstream.list_tools()  # the token is checked now, not at the agent's first call
        except Exception as problem:
            raise ConsoleUnreachable(await _why(http, url, problem)) from None
        await _relay(upstream)


async def _relay(upstream: Client) -> None:
    async def list_tools(_: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        return await upstream.list_tools(cursor=params.cursor if params else None)

    async def call_tool(_: Any, params: CallToolRequestParams) -> CallToolResult:
        return await upstream.call_tool(params.name, params.arguments or {})

    server: Server[Any] = Server(
        "verity", title="Verity", instructions=upstream.instructions, on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def _why(http: httpx2.AsyncClient, url: str, problem: BaseException) -> str:
    """The console's own words where it refused (the SDK's client keeps only the status), else what kept it from
    answering."""
    while isinstance(problem, BaseExceptionGroup) and len(problem.exceptions) == 1:  # the SDK's task groups
        problem = problem.exceptions[0]
    text = str(problem).strip() or type(problem).__name__
    try:
        refused = await http.get(url)
        if refused.status_code in (401, 403):
            text = str(refused.json().get("detail") or text)
    except (httpx2.HTTPError, ValueError, AttributeError):
        pass  # nothing answered, or not in words: the client's own reason stands
    return f"The Verity console at {url} did not take this connection: {text}"
