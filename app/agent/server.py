"""The console's MCP server (the official `mcp` SDK's MCPServer): start_training and the read side an agent needs
to follow and judge a run, served by the web process at /mcp over streamable HTTP.

Every call carries an organization's API token (`Authorization: Bearer`), resolved to an identity (organization,
role, plan) by the console's own `authenticate`, as for the JSON API; each tool reads that identity off the HTTP
request that carried the call. A refusal is a tool result with `isError` and the console's words; nothing is
recorded.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Annotated, Any

import anyio.to_thread
from litestar import Litestar, Request, asgi
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from app.agent.tools import Caller, ConsoleTools
from app.auth.guard import PUBLIC
from app.shell.errors import status_of
from app.shell.identity import authenticate, bearer_token, provide_identity
from domain.application import Verity
from domain.errors import DomainError, SettingsInvalid
from domain.runs.run_settings import FIELDS_BY_NAME, ROUND_SETTINGS, TRIAL_MAX_PROMPTS

PATH = "/mcp"
TOKEN_NEEDED = (
    "The MCP server takes an organization's API token: send Authorization: Bearer <token> "
    "(verity token create, or Settings → API tokens)."
)
INSTRUCTIONS = (
    "Verity trains LoRA adapters with GRPO reinforcement learning. To train: list_projects, list_dataset_versions "
    "and list_baselines show what a run can use; start_training launches a run whose reward is the baseline's main "
    "metric (trial=true first: one round on a few prompts); run_status and run_rounds follow it until run_ending "
    "says it ended; run_samples shows what the model answered; score_against_baseline and evaluation_result judge "
    "the adapter on the baseline's held-out test examples."
)
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
FREE_READ = " Costs nothing: it reads the console."

PRODUCT_DEFAULTS = ", ".join(f"{name} {FIELDS_BY_NAME[name].default_words()}" for name in ROUND_SETTINGS)
A_TRIAL = f"one round on up to {TRIAL_MAX_PROMPTS} prompts"
START_TRAINING = (
    "Start RL training (GRPO) of a LoRA adapter: saves the run and launches it at once, and answers its id, state "
    "and page address. The reward is always the baseline's main metric (its scoring and main metric); the run "
    "trains on the baseline's dataset version (none: the Math Pairs held-out benchmark's task). Settings left out "
    f"take the project's run defaults, else the product's ({PRODUCT_DEFAULTS}). Costs: a full run uses GPU time (up "
    "to its time limit) and counts as one of the plan's training runs this month; a trial (trial=true) runs "
    f"{A_TRIAL}, a few minutes of GPU, to check memory, speed and the reward before a full run. Needs the Pro plan "
    "and the member or owner role."
)


def _bounds(name: str) -> str:
    """A setting as the form bounds it: "Rounds, 1 - 1,000"."""
    return f"{FIELDS_BY_NAME[name].label}, {FIELDS_BY_NAME[name].range_words()}"


def agent_server(tools: ConsoleTools) -> MCPServer:
    """The MCP server over the console's commands and read models."""
    with _logging_left_alone():
        server: MCPServer = MCPServer("verity", title="Verity", instructions=INSTRUCTIONS)

    @server.tool(description=START_TRAINING,
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
    def start_training(
        ctx: Context,
        baseline: Annotated[str | None, Field(
            description="The completed baseline evaluation, by id or name (list_baselines); its main metric is "
                        "the reward")] = None,
        dataset_version: Annotated[str | None, Field(
            description="The version to train on, by id or label such as 'gsm8k-mini v3' (list_dataset_versions); "
                        "the baseline's own. None: the Math Pairs task")] = None,
        rounds: Annotated[int | None, Field(description=_bounds("rounds"))] = None,
        prompts_per_round: Annotated[int | None, Field(description=_bounds("prompts_per_round"))] = None,
        answers_per_prompt: Annotated[int | None, Field(description=_bounds("answers_per_prompt"))] = None,
        max_answer_tokens: Annotated[int | None, Field(description=_bounds("max_answer_tokens"))] = None,
        start_run: Annotated[str | None, Field(
            description="Start from: the id of a finished full run of the project whose adapter this run "
                        "continues. None: a new adapter on the base model")] = None,
        trial: Annotated[bool, Field(
            description=f"A trial: {A_TRIAL}, to check before a full run")] = False,
        project: Annotated[str | None, Field(
            description="The project, by id or name (list_projects). None: the organization's first")] = None,
        name: Annotated[str | None, Field(description="The run's name")] = None,
    ) -> CallToolResult:
        rl = {"rounds": rounds, "prompts_per_round": prompts_per_round, "answers_per_prompt": answers_per_prompt,
              "max_answer_tokens": max_answer_tokens}
        return _answer(ctx, tools, lambda caller: tools.start_training(
            caller, project=project, dataset_version=dataset_version, baseline=baseline, rl=rl,
            start_run=start_run, trial=trial, name=name))

    @server.tool(description="The organization's projects: the model each trains." + FREE_READ, annotations=READS)
    def list_projects(ctx: Context) -> CallToolResult:
        return _answer(ctx, tools, tools.list_projects)

    @server.tool(description="The organization's dataset versions, newest first, with their examples per split."
                 + FREE_READ, annotations=READS)
    def list_dataset_versions(ctx: Context) -> CallToolResult:
        return _answer(ctx, tools, tools.list_dataset_versions)

    @server.tool(description="The completed baseline evaluations of the base model, newest first: what each "
                 "tested (a dataset version's test examples or the Math Pairs held-out benchmark), its main metric "
                 "(start_training's reward) and its score." + FREE_READ, annotations=READS)
    def list_baselines(ctx: Context) -> CallToolResult:
        return _answer(ctx, tools, tools.list_baselines)

    @server.tool(description="The organization's runs, newest first, with their state." + FREE_READ,
                 annotations=READS)
    def list_runs(ctx: Context) -> CallToolResult:
        return _answer(ctx, tools, tools.list_runs)

    @server.tool(description="A run as its page shows it: state, status line (such as 'Training · round 3 / 20'), "
                 "rounds done, best round and validation reward, settings, reward, adapter and page address."
                 + FREE_READ, annotations=READS)
    def run_status(ctx: Context, run_id: Annotated[str, Field(description="The run's id")]) -> CallToolResult:
        return _answer(ctx, tools, lambda caller: tools.run_status(caller, run_id))

    @server.tool(description="A run's rounds, newest first: reward, validation reward, signal (the share of "
                 "prompts learned from), cut off, metric failures, loss, the seconds of sampling, grading, update "
                 "and validation, and the Training logs line. Round 0 scores the starting adapter." + FREE_READ,
                 annotations=READS)
    def run_rounds(ctx: Context, run_id: Annotated[str, Field(description="The run's id")]) -> CallToolResult:
        return _answer(ctx, tools, lambda caller: tools.run_rounds(caller, run_id))

    @server.tool(description="How a run ended, once it has ('ended' says whether it has): the line under its "
                 "reward chart, the note of a failed round, why it stopped early, its failure, its best round and "
                 "adapter, and a trial's report." + FREE_READ, annotations=READS)
    def run_ending(ctx: Context, run_id: Annotated[str, Field(description="The run's id")]) -> CallToolResult:
        return _answer(ctx, tools, lambda caller: tools.run_ending(caller, run_id))

    @server.tool(description="Samples of a round: its first three prompts, each with its reference and every "
                 "answer with its score, whether it was cut off and the metric's failure; text shortened as the "
                 "run page shows it. Read them before trusting the numbers." + FREE_READ, annotations=READS)
    def run_samples(
        ctx: Context,
        run_id: Annotated[str, Field(description="The run's id")],
        round: Annotated[int | None, Field(description="The round; None: the latest with samples")] = None,
    ) -> CallToolResult:
        return _answer(ctx, tools, lambda caller: tools.run_samples(caller, run_id, round))

    @server.tool(description="Cancel a queued or running run: its GPU work stops and it ends Cancelled. Costs "
                 "nothing. Needs the member or owner role.",
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False))
    def cancel_run(ctx: Context, run_id: Annotated[str, Field(description="The run's id")]) -> CallToolResult:
        return _answer(ctx, tools, lambda caller: tools.cancel_run(caller, run_id))

    @server.tool(description="Score against baseline: evaluates a finished run's adapter on its baseline's test "
                 "examples with the baseline's scoring and main metric, the held-out result to judge it by (not "
                 "the reward the run reported). Answers the evaluation's id; follow it with evaluation_result. "
                 "Costs a little GPU time for one evaluation; it is not a training run of the plan. Needs the "
                 "member or owner role.",
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
    def score_against_baseline(ctx: Context, run_id: Annotated[str, Field(description="The run's id")]
                               ) -> CallToolResult:
        return _answer(ctx, tools, lambda caller: tools.score_against_baseline(caller, run_id))

    @server.tool(description="An evaluation's state and score with its breakdown; for Score against baseline, the "
                 "baseline's score, the adapter's and the difference, and on how many examples it did better or "
                 "worse." + FREE_READ, annotations=READS)
    def evaluation_result(ctx: Context, evaluation_id: Annotated[str, Field(description="The evaluation's id")]
                          ) -> CallToolResult:
        return _answer(ctx, tools, lambda caller: tools.evaluation_result(caller, evaluation_id))

    return server


@contextmanager
def _logging_left_alone() -> Iterator[None]:
    """MCPServer() calls logging.basicConfig() (modelcontextprotocol/python-sdk#1656); the web process's logging
    stays as the process set it up."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _answer(ctx: Context, tools: ConsoleTools, call: Callable[[Caller], dict[str, Any]]) -> CallToolResult:
    """The tool's answer as JSON (text and structured), or the console's refusal as a tool error."""
    try:
        answer = call(_caller(ctx, tools))
    except SettingsInvalid as refused:
        words = "\n".join(f"{field}: {message}" if field else message for field, message in refused.errors.items())
        return _refused(words, {"errors": refused.errors, "status_code": status_of(refused)})
    except DomainError as refused:
        return _refused(refused.message, {"detail": refused.message, "status_code": status_of(refused)})
    return CallToolResult(content=[TextContent(type="text", text=_json(answer))], structured_content=answer)


def _refused(words: str, details: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=words)], structured_content=details, is_error=True)


def _json(answer: dict[str, Any]) -> str:
    return json.dumps(answer, ensure_ascii=False, default=str)


def _caller(ctx: Context, tools: ConsoleTools) -> Caller:
    """The token's identity, as the endpoint resolved it for the HTTP request that carried this call."""
    http = ctx.request_context.request
    if http is None:
        raise DomainError(TOKEN_NEEDED)
    request: Request[Any, Any, Any] = Request(http.scope)
    return Caller(provide_identity(request, tools.verity), request)


def agent_endpoint(server: MCPServer, verity: Verity) -> ASGIRouteHandler:
    """/mcp in the console. It resolves each request's API token itself, with the console's `authenticate` (the
    guard's, which it passes by): a viewer's calls come through, and each tool refuses what the token's role may
    not do, in the domain's or the guard's words. Then the SDK's session manager answers."""
    # Not the app-wide guard's: it would refuse a viewer's read, since every MCP call is a POST. No CSRF check: the
    # endpoint answers only a bearer token, which a browser never adds across sites (and Litestar's check would read
    # a form body an ASGI handler does not have: a 500 for any form POST).
    opt = {PUBLIC: True, "exclude_from_csrf": True}

    @asgi(PATH, is_mount=True, copy_scope=True, name="agent:mcp", opt=opt)
    async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        connection: ASGIConnection[Any, Any, Any, Any] = ASGIConnection(scope)
        if bearer_token(connection) is None:  # a signed-in browser is not an agent
            raise NotAuthorizedException(TOKEN_NEEDED, headers={"WWW-Authenticate": "Bearer"})
        identity = await anyio.to_thread.run_sync(authenticate, connection, verity)
        scope.setdefault("state", {})["identity"] = identity  # type: ignore[typeddict-unknown-key]
        await server.session_manager.handle_request(scope, receive, send)

    return mcp_endpoint


def agent_lifespan(server: MCPServer) -> Callable[[Litestar], Any]:
    """The SDK's session manager lives as long as the app; a new one each time the app starts (a manager runs once)."""

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        server.streamable_http_app(
            stateless_http=True,  # no session to keep: any web process behind a load balancer answers any call
            json_response=True,  # one JSON answer a call; the tools send no progress
            # Every call must carry an API token, which a page rebound to this host cannot send, so the SDK's
            # Host/Origin check adds nothing here and would refuse a console served under its own name.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        async with server.session_manager.run():
            yield

    return lifespan
