"""What the tests that drive a console share, importable from any test module (tests/conftest.py puts this folder
on sys.path):

- `verity serve` in its own process on a free port over a data folder (`serve`, or `served_console` with its first
  owner's sign-in from first-owner.txt and an owner's API token made with `verity token create`);
- headless Chromium (`chromium`), a page signed in through the sign-in page (`sign_in`) and the errors it logs
  (`watch_problems`);
- the Verity application and read models over a store, with its Default organization and project
  (`default_organization`);
- a console over the test client, its owner signed in with a session (`client_console`), and a run trained to
  its adapter as the jobs record it (`record_trained`);
- the jobs' dispatcher over a console's event log, sending to a test's callables instead of a broker
  (`jobs_following_the_log`);
- the console's refusals word for word, as the role tests read them.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

import httpx
import pytest
from litestar.testing import TestClient

from app.auth.testing import sign_in_as
from app.factory import create_app
from app.shell.jobs import JOBS
from domain.application import Verity
from domain.runs.progress import RoundResult
from jobs.dispatch_log import DispatchLog
from jobs.dispatcher import Dispatcher
from projections.runner import ProjectionRunner
from projections.store import ReadModels
from verity.config import Settings
from verity.storage import FileStorage
from verity.wiring import build_application, build_read_models, ensure_default_organization

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

REPO_ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO_ROOT / "artifacts"  # git-ignored; kept by CI
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]  # fmt: skip
needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None, reason="Debian's chromium is not installed (make browser)"
)
# Left out of a served console's environment, so that it runs on the embedded default in its data folder alone.
EMBEDDED = ("VERITY_DATABASE_URL", "VERITY_BROKER_URL", "VERITY_STORAGE_URL")

VIEWERS_READ_ONLY = (
    "Viewers can read everything but change nothing. Ask an owner of your organization to make you a member."
)
ROLE_NEEDED = (
    "Launching a run needs the member or owner role, and you are a viewer. Ask an owner of your "
    "organization to change your role."
)
PRO_PLAN_NEEDED = "RL training is on the Pro plan. An owner can change the plan under Settings → Plan and billing."


# --- `verity serve` in its own process ------------------------------------------------------------------------------
def console_env(data_dir: Path, *unset: str) -> dict[str, str]:
    """This process's environment with VERITY_DATA_DIR set to `data_dir`, less EMBEDDED's names and `unset`."""
    env = {**os.environ, "VERITY_DATA_DIR": str(data_dir)}
    for name in (*EMBEDDED, *unset):
        env.pop(name, None)
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serve(data_dir: Path, env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen]]:
    """`verity serve` on a free port, in a process group of its own, its output in serve.log beside `data_dir`.
    Yields its address and process once its sign-in page answers (RuntimeError with the log's tail when it does not
    within a minute); stops it after, with whatever it still supervises (a trainer)."""
    port = free_port()
    log_path = data_dir.parent / "serve.log"
    url = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "verity.cli", "serve", "--port", str(port)],
            env=env, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/sign-in", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"verity serve did not start: {log_path.read_text()[-3000:]}")
                time.sleep(0.2)
            yield url, process
        finally:
            _stop(process)


def _stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)  # the server and the trainer it may still supervise
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass  # it had ended already, and all it started


def first_owner(data_dir: Path) -> dict[str, str]:
    """The first owner's sign-in as `verity serve` writes it to DATA_DIR/first-owner.txt: {"email", "password"}."""
    return dict(line.split(": ", 1) for line in (data_dir / "first-owner.txt").read_text().splitlines())


def verity_cli(env: dict[str, str], *args: str) -> str:
    """A `verity` command run beside the console, as a person runs it; what it prints, stripped."""
    return subprocess.run(
        [sys.executable, "-m", "verity.cli", *args], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def create_token(env: dict[str, str], name: str = "tests", role: str = "owner", *more: str) -> str:
    """An API token made with `verity token create` (`more`: further options, such as --organization)."""
    return verity_cli(env, "token", "create", "--name", name, "--role", role, *more)


@dataclass
class Served:
    """`verity serve` running over `data_dir`, with its first owner's sign-in and an owner's API token."""

    url: str
    data_dir: Path
    process: subprocess.Popen
    email: str
    password: str
    token: str

    @property
    def api(self) -> dict[str, str]:
        """Headers for the JSON API as a script calls it."""
        return {"Authorization": f"Bearer {self.token}"}


ServedT = TypeVar("ServedT", bound=Served)


@contextmanager
def served_console(
    data_dir: Path, env: dict[str, str] | None = None, kind: type[ServedT] = Served
) -> Iterator[ServedT]:
    """`serve` over `data_dir` (environment: `console_env(data_dir)` unless given), as a `kind` of Served."""
    env = console_env(data_dir) if env is None else env
    with serve(data_dir, env) as (url, process):
        owner = first_owner(data_dir)
        yield kind(url, data_dir, process, owner["email"], owner["password"], create_token(env))


# --- headless Chromium ----------------------------------------------------------------------------------------------
def chromium(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def sign_in(page: Page, url: str, email: str, password: str, *, via: str | None = None, lands: str = "/runs*") -> None:
    """Sign `page` in through the sign-in page as a person does: opened straight (then on to `lands`), or by opening
    `via`, which sends a visitor to the sign-in page and, once signed in, back to `via`."""
    page.goto(f"{url}{via or '/sign-in'}")
    if via is not None:
        page.wait_for_url("**/sign-in?**")
    page.fill("#input-email", email)
    page.fill("#input-password", password)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(f"{url}{via or lands}")


def watch_problems(page: Page) -> list[str]:
    """The console errors and uncaught errors `page` logs from now on; the same list as `page.problems`."""
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.problems = problems  # type: ignore[attr-defined]
    return problems


# --- a console over the test client ---------------------------------------------------------------------------------
def default_organization(settings: Settings) -> tuple[Verity, ReadModels, UUID, UUID]:
    """The Verity application and read models over `settings`' store, and the ids of its Default organization and
    project (made on first use, as `verity serve` makes them)."""
    verity = build_application(settings)
    read_models = build_read_models(settings)
    org_id, project_id = ensure_default_organization(settings, verity, read_models)
    return verity, read_models, org_id, project_id


@dataclass
class ClientConsole:
    """The console's app over the test client, and the Verity application and read models behind it."""

    client: TestClient
    verity: Verity
    read_models: ReadModels
    org_id: UUID
    project_id: UUID

    def settle(self, position: int | None = None) -> None:
        """Wait until the read models show everything written so far (the runner follows in background)."""
        target = position if position is not None else self.log_position()
        assert self.read_models.wait_for(target, timeout=10), "the read models did not catch up"

    def log_position(self) -> int:
        """Where the event log ends now."""
        return self.verity.recorder.max_notification_id() or 0


ClientConsoleT = TypeVar("ClientConsoleT", bound=ClientConsole)


@contextmanager
def client_console(
    settings: Settings,
    kind: type[ClientConsoleT],
    sends: Mapping[str, Send] | None = None,
    storage: FileStorage | None = None,
    **more: Any,
) -> Iterator[ClientConsoleT]:
    """The console over `settings`' store, with its Default organization and project, the owner of Default signed
    in with a session; a `kind` of ClientConsole (`more`: its own further fields). With `sends`, jobs follow the
    event log and send each message to the callable of its kind (as `jobs_following_the_log` takes them). With a
    `storage`, the app keeps its files there and the console gets it as its `storage` field; without one, the app
    uses the storage the environment configures."""
    verity, read_models, org_id, project_id = default_organization(settings)
    runner = ProjectionRunner(verity, read_models)
    runner.run_once()
    app = create_app(verity, read_models, runner=runner, storage=storage, debug=True)
    if storage is not None:
        more["storage"] = storage
    with ExitStack() as stack:
        if sends is not None:
            app.state[JOBS] = stack.enter_context(jobs_following_the_log(settings, verity, **sends))
        client = stack.enter_context(TestClient(app))
        sign_in_as(client, verity, read_models, org_id)  # the owner of Default, with a session and a CSRF header
        yield kind(client, verity, read_models, org_id, project_id, **more)


# --- the jobs, following the event log without a broker --------------------------------------------------------------
Send = Callable[[UUID], object]


class SentTo:
    """The dispatcher's outbox in a test: each message's id goes to the test's callable of its kind (a list's
    `append`), and nowhere when the test gave none."""

    def __init__(self, sends: Mapping[str, Send]) -> None:
        self.sends = dict(sends)

    def _send(self, kind: str, target: UUID) -> None:
        send = self.sends.get(kind)
        if send is not None:
            send(target)

    def send_launch(self, run_id: UUID) -> None:
        self._send("launch", run_id)

    def send_merge(self, run_id: UUID) -> None:
        self._send("merge", run_id)

    def send_evaluation(self, evaluation_id: UUID) -> None:
        self._send("evaluation", evaluation_id)

    def send_loop_step(self, loop_id: UUID) -> None:
        self._send("loop", loop_id)

    def send_experiment_step(self, experiment_id: UUID) -> None:
        self._send("experiment", experiment_id)

    def send_probe(self, probe_id: UUID) -> None:
        self._send("probe", probe_id)

    def send_rescoring(self, rescoring_id: UUID) -> None:
        self._send("rescoring", rescoring_id)


class FollowingJobs:
    """What the console sees of them (app/shell/jobs.py's ConsoleJobs): how far they have sent."""

    embedded = False

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher

    def launch_problem(self, settings: Mapping[str, Any]) -> str | None:
        return None

    def wait_sent(self, position: int, timeout: float = 5.0) -> bool:
        return self.dispatcher.wait_sent(position, timeout)

    def stop(self) -> None:
        self.dispatcher.stop()


@contextmanager
def jobs_following_the_log(settings: Settings, verity: Verity, **sends: Send) -> Iterator[FollowingJobs]:
    """The jobs' dispatcher (jobs/dispatcher.py) over `verity`'s event log, from where it last got to in the read
    models' database of `settings`; `sends`: launch, merge, evaluation, loop, experiment."""
    dispatcher = Dispatcher(verity, SentTo(sends), DispatchLog(settings))
    dispatcher.start()
    try:
        yield FollowingJobs(dispatcher)
    finally:
        dispatcher.stop()


def record_trained(verity: Verity, run_id: UUID) -> None:
    """A launched run prepared, its round 0 and round 1 scored and its adapter (size 1234) ready, as the jobs record
    them: the run ends Adapter ready."""
    verity.record_preparing(run_id)
    verity.record_round_scored(run_id, RoundResult(0, 0.3, validation_seconds=1.0))
    verity.record_round_scored(run_id, RoundResult(1, 0.4, reward=0.4, signal=0.5, cut_off=0.0, updated=True,
                                                   loss=0.01, graded_answers=8))  # fmt: skip
    verity.record_saving_adapter(run_id)
    verity.record_adapter_ready(run_id, 1, f"runs/{run_id}/adapter", "ab" * 32, 1234)
