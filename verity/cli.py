"""The `verity` command: serve the console, run a worker, migrate, rebuild projections, build the tiny model,
and what whoever runs the console does by hand (tokens, passwords, organizations)."""

from __future__ import annotations

import subprocess
import sys
import time

import click

from verity.config import Settings
from verity.data_folder import owner_only_data_folder

PROGRESS_SECONDS = 2.0  # how often a long command says how far it got


class _DataFolderCommand(click.Command):
    """Each command reads or writes the data folder, and so do the processes it starts (the worker's trainer, the
    tiny model's build), which inherit the owner-only umask. Here rather than on the group, so `--help` makes no
    folder."""

    def invoke(self, ctx: click.Context) -> object:
        with owner_only_data_folder(Settings.from_env().data_dir):
            return super().invoke(ctx)


class _Commands(click.Group):
    command_class = _DataFolderCommand
    group_class = type  # a group of commands (`verity org ...`) is one of these too


@click.group(cls=_Commands)
def main() -> None:
    """Verity: a self-hosted console and trainer for GRPO runs."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Web processes, under uvicorn's process manager; above 1 needs VERITY_BROKER_URL.")
def serve(host: str, port: int, workers: int) -> None:
    """Serve the console (the data folder comes from VERITY_DATA_DIR, default ./data)."""
    from app.server import SeveralProcessesNeedABroker
    from app.server import serve as serve_console  # the web stack loads only for this command

    try:
        serve_console(Settings.from_env(), host=host, port=port, jobs=_start_jobs, workers=workers,
                      app_factory="verity.cli:web_process_app")
    except SeveralProcessesNeedABroker as refusal:
        raise click.ClickException(str(refusal)) from None


def web_process_app():
    """One web process of `verity serve --workers N`, as uvicorn's process manager starts each."""
    from app.server import served_app

    return served_app(Settings.from_env(), jobs=_start_jobs)


def _start_jobs(settings: Settings, verity, read_models):
    """The jobs beside the console (jobs/service.py): the dispatcher that follows the event log and sends what the
    console records, the reconciler, and on the embedded default the worker; the handle says what the console may
    know of them (launch readiness, how far they have sent)."""
    from jobs.service import start

    return start(settings, verity, read_models)


@main.command()
def migrate() -> None:
    """Make the event store's tables (events, snapshots) and apply the read models' schema migrations: run it once
    before starting several processes on a new database, which would otherwise race to make the same tables."""
    from migrations import apply_migrations
    from verity.wiring import build_application

    settings = Settings.from_env()
    build_application(settings)  # the event store makes its tables where they are missing
    applied = apply_migrations(settings)
    click.echo(f"Applied {len(applied)} migration(s)." if applied else "The schema is up to date.")


@main.group()
def projections() -> None:
    """Read models built from the event store."""


@projections.command("rebuild")
def rebuild() -> None:
    """Drop every read model and rebuild it from the event store."""
    from projections.rebuild import progress_words, rebuild_all

    started = last_said = time.monotonic()

    def say_progress(position: int, last: int) -> None:  # every few seconds: a million events take a minute
        nonlocal last_said
        if (now := time.monotonic()) - last_said >= PROGRESS_SECONDS:
            click.echo(progress_words(position, last, now - started))
            last_said = now

    count = rebuild_all(Settings.from_env(), say_progress)
    click.echo(f"Rebuilt the read models from {count} event(s) in {time.monotonic() - started:.1f} s.")


@main.command()
@click.option(
    "--queue",
    "queues",
    multiple=True,
    help="A Training provider's queue to consume; repeat for more. Default: local. The control queue is always served.",
)
@click.option("--health-port", type=int, default=None, envvar="VERITY_WORKER_HEALTH_PORT",
              help="Serve /healthz, /readyz and /metrics on this port (VERITY_WORKER_HEALTH_PORT); none by default.")
@click.option("--health-host", default="127.0.0.1", show_default=True, envvar="VERITY_WORKER_HEALTH_HOST",
              help="The address that port listens on (VERITY_WORKER_HEALTH_HOST): 0.0.0.0 for probes from elsewhere.")
def worker(queues: tuple[str, ...], health_port: int | None, health_host: str) -> None:
    """Run a job worker: it trains the runs, trials, evaluations and merges sent to its provider queues."""
    from jobs.worker import run_worker
    from verity.log_format import configure_logging

    # Before run_worker, whose logging.basicConfig then leaves the root logger as configured here.
    configure_logging()
    run_worker(Settings.from_env(), list(queues) or None, health_port, health_host)


@main.command("try-production")
@click.option("--database-url", default="postgresql://postgres@127.0.0.1:5432/verity_try", show_default=True,
              help="PostgreSQL: the database is made when missing.")
@click.option("--broker-url", default="redis://127.0.0.1:6379/0", show_default=True, help="Redis.")
@click.option("--port", default=8000, show_default=True, type=int, help="The console's port.")
@click.option("--web-processes", default=2, show_default=True, type=click.IntRange(1, 16))
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 16))
@click.option("--s3-port", default=9000, show_default=True, type=int, help="The local S3 server's port.")
@click.option("--health-port", default=9101, show_default=True, type=int,
              help="The first worker's health port; the next workers take the ports after it.")
def try_production(database_url: str, broker_url: str, port: int, web_processes: int, workers: int, s3_port: int,
                   health_port: int) -> None:
    """The production layout on this machine, for a try: web processes, workers, PostgreSQL, Redis and a local
    S3 server (moto), in one command; Ctrl-C stops it all."""
    from verity.production_try import Layout, TryRefused
    from verity.production_try import try_production as start

    layout = Layout(database_url, broker_url, port, web_processes, workers, s3_port, health_port)
    try:
        sys.exit(start(layout, click.echo))
    except TryRefused as refusal:
        raise click.ClickException(str(refusal)) from None


@main.command("mcp", cls=click.Command)  # a plain command: it never opens the data folder
@click.option("--url", envvar="VERITY_URL", default="http://127.0.0.1:8000", show_default=True,
              help="The console's address (VERITY_URL); its MCP endpoint is URL/mcp.")
@click.option("--token-env", default="VERITY_API_TOKEN", show_default=True,
              help="The environment variable that holds the organization's API token (never an argument, which "
                   "other users of the machine could read).")
def mcp_stdio(url: str, token_env: str) -> None:
    """Serve the console's MCP tools to a local agent over stdio (start_training and the read side), through the
    console at URL with an organization's API token."""
    import os

    import anyio

    from verity.agent_bridge import ConsoleUnreachable, serve_stdio

    token = os.environ.get(token_env, "").strip()
    if not token:
        raise click.ClickException(
            f"verity mcp needs an organization's API token in the environment variable {token_env} "
            "(verity token create --name NAME prints one)."
        )
    try:
        anyio.run(serve_stdio, url, token)
    except ConsoleUnreachable as problem:
        raise click.ClickException(str(problem)) from None


@main.group()
def token() -> None:
    """API tokens: each acts in one organization with one role; shown once, stored as a SHA-256."""


@token.command("create")
@click.option("--name", required=True, help="What uses the token, such as a script or an agent.")
@click.option("--role", type=click.Choice(["owner", "member", "viewer"]), default="member", show_default=True)
@click.option("--organization", default="Default", show_default=True, help="The organization's name.")
def create_token(name: str, role: str, organization: str) -> None:
    """Issue an API token and print it once."""
    from domain.organizations import Organization
    from verity.wiring import SETUP, build_application

    verity = build_application(Settings.from_env())
    issued = verity.issue_token(Organization.create_id(organization), name, role, SETUP, "owner")
    click.echo(issued.text)
    click.echo(f"Token {issued.id} for {organization} as {role}: shown only this once.", err=True)


@token.command("revoke")
@click.argument("token_id")
@click.option("--organization", default="Default", show_default=True, help="The organization's name.")
def revoke_token(token_id: str, organization: str) -> None:
    """Revoke a token by its id."""
    from uuid import UUID

    from domain.organizations import Organization
    from verity.wiring import SETUP, build_application

    verity = build_application(Settings.from_env())
    verity.revoke_token(Organization.create_id(organization), UUID(token_id), SETUP, "owner")
    click.echo(f"Revoked token {token_id}.")


@main.group()
def account() -> None:
    """People's accounts, for whoever runs the console (a person changes their own password under Your account)."""


@account.command("reset-password")
@click.argument("email")
def reset_password(email: str) -> None:
    """Give an account a new random password, printed once; every session of the account ends."""
    import secrets

    from verity.wiring import SETUP, build_application

    verity = build_application(Settings.from_env())
    found = verity.find_account(email)
    if found is None:
        raise click.ClickException(f"There is no account with the email {email}.")
    password = secrets.token_urlsafe(16)
    verity.change_password(found.id, password, SETUP)
    click.echo(password)
    click.echo(f"New password for {found.email}: shown only this once. Every session of the account ended.", err=True)


@main.group()
def org() -> None:
    """Organizations, for whoever runs the console."""


@org.command("create")
@click.argument("name")
@click.option("--owner", "owner_email", required=True, help="The first owner's email; their account is made if new.")
@click.option("--plan", default="free", show_default=True, help="free, or pro to launch RL runs.")
@click.option("--model", default=None, help="The model of its first project, Demo: a hub id or a folder. "
              "Default: the project's own tiny model, with the numbers it learns with.")
def create_org(name: str, owner_email: str, plan: str, model: str | None) -> None:
    """Create an organization with its first owner and a project Demo. A new account's password is printed once."""
    from domain.errors import DomainError
    from verity.wiring import SETUP, build_application, ensure_demo_project

    settings = Settings.from_env()
    verity = build_application(settings)
    try:
        created = verity.create_organization_with_owner(name, plan, owner_email, SETUP)
    except DomainError as refusal:
        raise click.ClickException(refusal.message) from None
    ensure_demo_project(settings, verity, created.org_id, model)
    if created.password is None:
        click.echo(
            f"Organization {name.strip()} created on the {plan} plan. {created.owner_email} already had an account: "
            "they are its owner and sign in with their own password (none is printed).",
            err=True,
        )
        return
    click.echo(created.password)
    click.echo(
        f"Organization {name.strip()} created on the {plan} plan, with a new account for its owner "
        f"{created.owner_email}: the password above is shown only this once.",
        err=True,
    )


@main.group("tiny-model")
def tiny_model() -> None:
    """The project's own tiny model, used by the demo and the tests."""


@tiny_model.command("build")
@click.option("--out", default=None, help="Folder to write the model to (default: DATA_DIR/models/tiny-math).")
@click.option("--seed", default=0, show_default=True, type=int)
def build_tiny_model(out: str | None, seed: int) -> None:
    """Build and warm-start the tiny model, with no download."""
    target = out or str(Settings.from_env().tiny_model_dir)
    # The trainer runs in its own process so this command's process never imports torch.
    raise SystemExit(
        subprocess.call([sys.executable, "-m", "trainer", "tiny-model", "build", "--out", target, "--seed", str(seed)])
    )


if __name__ == "__main__":
    main()
